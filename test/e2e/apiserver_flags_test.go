package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
)

// TestPrivilegedContainersAllowedAsInKubeadmClusters: kapi's serve command
// allows privileged containers, as clusters kubeadm and kind make run
// kube-apiserver with --allow-privileged; with --allow-privileged=false a
// privileged pod gets kube-apiserver's refusal.
func TestPrivilegedContainersAllowedAsInKubeadmClusters(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "privileged"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "busybox", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
		}}},
	}
	ctx := context.Background()
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	allowing := startKapi(t).clientset()
	if _, err := allowing.CoreV1().Pods("kube-system").Create(ctx, pod, dryRun); err != nil {
		t.Errorf("a privileged pod on a default kapi: %v", err)
	}
	refusing := startKapi(t, "--allow-privileged=false").clientset()
	_, err := refusing.CoreV1().Pods("kube-system").Create(ctx, pod, dryRun)
	want := `Pod "privileged" is invalid: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy`
	if err == nil || err.Error() != want {
		t.Errorf("a privileged pod with --allow-privileged=false: %v; want %q", err, want)
	}
}

// TestServingCertificateFromFiles: with --tls-cert-file and
// --tls-private-key-file kapi serves the operator's certificate; its
// kubeconfig and the kube-root-ca.crt ConfigMaps pods read carry the CA
// that follows it in the file, so kubectl and pods verify the server.
func TestServingCertificateFromFiles(t *testing.T) {
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("localhost", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := writeFile(certFile, string(certPEM)); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(keyFile, string(keyPEM)); err != nil {
		t.Fatal(err)
	}
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil || len(certs) != 2 {
		t.Fatalf("the generated pair is not a certificate and its CA: %d, %v", len(certs), err)
	}
	leaf, operatorCA := certs[0], certs[1]

	k := startKapi(t, "--tls-cert-file", certFile, "--tls-private-key-file", keyFile)
	if out := k.mustKubectl("get", "namespace", "kube-system", "-o", "name"); strings.TrimSpace(out) != "namespace/kube-system" {
		t.Errorf("kubectl with kapi's kubeconfig: %q", out)
	}
	host, err := url.Parse(k.config.Host)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", host.Host, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	servedCert := conn.ConnectionState().PeerCertificates[0]
	conn.Close()
	if !servedCert.Equal(leaf) {
		t.Errorf("kapi serves %q, not the operator's certificate", servedCert.Subject)
	}

	var published *corev1.ConfigMap
	waitFor(t, 10*time.Second, "kube-root-ca.crt in default", func() bool {
		published, err = k.clientset().CoreV1().ConfigMaps("default").Get(context.Background(), "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil
	})
	block, _ := pem.Decode([]byte(published.Data["ca.crt"]))
	if block == nil {
		t.Fatalf("kube-root-ca.crt holds no certificate: %q", published.Data["ca.crt"])
	}
	if got, err := x509.ParseCertificate(block.Bytes); err != nil || !got.Equal(operatorCA) {
		t.Errorf("kube-root-ca.crt's CA is not the operator's: %v", err)
	}
}

// TestServiceClusterIPRange: --service-cluster-ip-range is the range
// ClusterIPs come from, its first address the kubernetes Service's, and
// the range the default ServiceCIDR publishes, as in kube-apiserver.
func TestServiceClusterIPRange(t *testing.T) {
	k := startKapi(t, "--service-cluster-ip-range=10.1.0.0/16")
	client := k.clientset()
	kubernetesService, err := client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || kubernetesService.Spec.ClusterIP != "10.1.0.1" {
		t.Fatalf("the kubernetes Service: %v; want ClusterIP 10.1.0.1", err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	created, err := client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ip, err := netip.ParseAddr(created.Spec.ClusterIP); err != nil || !netip.MustParsePrefix("10.1.0.0/16").Contains(ip) {
		t.Errorf("a new Service's ClusterIP %q is not in 10.1.0.0/16", created.Spec.ClusterIP)
	}
	waitFor(t, 10*time.Second, "the default ServiceCIDR", func() bool {
		cidr, err := client.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
		return err == nil && len(cidr.Spec.CIDRs) == 1 && cidr.Spec.CIDRs[0] == "10.1.0.0/16"
	})
}

// TestDisabledWebhookAdmission: with --disable-admission-plugins naming
// ValidatingAdmissionWebhook (as kubectl's own tests start kube-apiserver)
// a webhook configuration is stored but never called; without it, the
// same configuration's unreachable webhook refuses the write.
func TestDisabledWebhookAdmission(t *testing.T) {
	ctx := context.Background()
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	config := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "unreachable"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "unreachable.example.com",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/validate")},
			Rules:                   configMapCreates,
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	create := func(client *kubernetes.Clientset, name string) error {
		_, err := client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		return err
	}
	for _, disabled := range []bool{false, true} {
		args := []string{"--controllers=-*"}
		if disabled {
			args = append(args, "--disable-admission-plugins=ValidatingAdmissionWebhook")
		}
		client := startKapi(t, args...).clientset()
		if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, config, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var err error
		for i := 0; i < 50; i++ { // until the plugin has seen the configuration
			if err = create(client, fmt.Sprintf("cm-%d", i)); err != nil || disabled && i == 10 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		switch {
		case disabled && err != nil:
			t.Errorf("with the webhook plugin disabled: %v", err)
		case !disabled && (err == nil || !strings.Contains(err.Error(), `failed calling webhook "unreachable.example.com"`)):
			t.Errorf("with the webhook plugin running: %v; want the webhook's failure", err)
		}
		if disabled {
			mutatingStillRuns(t, client, create)
		}
	}
}

// configMapCreates is the rule of a webhook called on ConfigMap creates.
var configMapCreates = []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}

// mutatingStillRuns checks that the mutating webhooks run with the
// validating ones disabled: an unreachable one that must not fail fails
// the creates once the plugin has seen it.
func mutatingStillRuns(t *testing.T, client *kubernetes.Clientset, create func(*kubernetes.Clientset, string) error) {
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	config := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "unreachable"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "mutating.example.com",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/mutate")},
			Rules:                   configMapCreates,
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if _, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(context.Background(), config, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := 0; i < 50 && err == nil; i++ {
		err = create(client, fmt.Sprintf("mutated-%d", i))
		time.Sleep(100 * time.Millisecond)
	}
	if err == nil || !strings.Contains(err.Error(), `failed calling webhook "mutating.example.com"`) {
		t.Errorf("with only the validating webhooks disabled: %v; want the mutating webhook's failure", err)
	}
}

// TestDisabledNamespaceLifecycle: with NamespaceLifecycle disabled, as
// many envtest suites start kube-apiserver, objects go into namespaces
// that do not exist and the namespaces every cluster keeps may be
// deleted, as on kube-apiserver so started.
func TestDisabledNamespaceLifecycle(t *testing.T) {
	ctx := context.Background()
	client := startKapi(t, "--controllers=-*", "--disable-admission-plugins=NamespaceLifecycle,LimitRanger,ServiceAccount,ResourceQuota").clientset()
	if _, err := client.CoreV1().ConfigMaps("ghost").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a create in a namespace that does not exist: %v", err)
	}
	if _, err := client.CoreV1().ConfigMaps("ghost").Get(ctx, "x", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().Namespaces().Delete(ctx, metav1.NamespaceDefault, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting the default namespace: %v", err)
	}
	if _, err := client.CoreV1().ConfigMaps(metav1.NamespaceDefault).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "y"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a create in a namespace being deleted: %v", err)
	}
}
