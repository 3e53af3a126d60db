package kapitest

import (
	"context"
	"fmt"
	"net"
	neturl "net/url"
	"os"
	"path/filepath"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
)

// Webhooks is where the test serves the admission webhooks installed with
// WithWebhooks: an HTTPS server on Host:Port with the certificate and key
// in CertDir (tls.crt, tls.key), as controller-runtime's webhook server
// reads them (webhook.Options{Host, Port, CertDir}).
type Webhooks struct {
	Host    string
	Port    int
	CertDir string
	// CABundle is what the server trusts the webhooks' certificate with.
	CABundle []byte
}

// URL is the address of path on the webhook server.
func (w *Webhooks) URL(path string) string {
	return "https://" + net.JoinHostPort(w.Host, strconv.Itoa(w.Port)) + path
}

// WithWebhooks installs the MutatingWebhookConfigurations and
// ValidatingWebhookConfigurations in the given YAML or JSON files (or the
// .yaml, .yml and .json files of the given directories, such as kubebuilder's
// config/webhook), pointed at the test's webhook server (Env.Webhooks): a
// webhook that names a Service is called at its path there instead, as
// envtest's WebhookInstallOptions does.
func WithWebhooks(paths ...string) Option {
	return func(o *options) { o.webhookPaths = append(o.webhookPaths, paths...) }
}

// WithWebhookObjects installs the given webhook configurations
// (*admissionregistrationv1.MutatingWebhookConfiguration or
// *admissionregistrationv1.ValidatingWebhookConfiguration), as
// WithWebhooks does.
func WithWebhookObjects(configs ...any) Option {
	return func(o *options) { o.webhookObjects = append(o.webhookObjects, configs...) }
}

// webhookConfigs are the webhook configurations of o.
func (o options) webhookConfigs() ([]any, error) {
	configs := append([]any(nil), o.webhookObjects...)
	for _, path := range o.webhookPaths {
		read, err := readWebhooks(path)
		if err != nil {
			return nil, err
		}
		configs = append(configs, read...)
	}
	return configs, nil
}

// install creates the webhook configurations, pointed at the
// test's webhook server.
func (w *Webhooks) install(config *rest.Config, configs []any) error {
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	ctx := context.Background()
	for _, c := range configs {
		switch c := c.(type) {
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			c = c.DeepCopy()
			for i := range c.Webhooks {
				w.point(&c.Webhooks[i].ClientConfig)
			}
			_, err = client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, c, metav1.CreateOptions{})
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			c = c.DeepCopy()
			for i := range c.Webhooks {
				w.point(&c.Webhooks[i].ClientConfig)
			}
			_, err = client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, c, metav1.CreateOptions{})
		default:
			err = fmt.Errorf("%T is not a webhook configuration", c)
		}
		if err != nil {
			return fmt.Errorf("installing webhooks: %w", err)
		}
	}
	return nil
}

// newWebhookServer picks a free loopback port and writes a certificate
// for it into certDir.
func newWebhookServer(certDir string) (*Webhooks, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.IPv4(127, 0, 0, 1)}, []string{"localhost"})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certDir, "tls.crt"), certPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certDir, "tls.key"), keyPEM, 0o600); err != nil {
		return nil, err
	}
	// The certificate file holds the serving certificate and the CA that
	// signed it: trusting the file trusts the server.
	return &Webhooks{Host: "127.0.0.1", Port: port, CertDir: certDir, CABundle: certPEM}, nil
}

// point makes a webhook call the test's server: a Service becomes the URL
// of its path there; a URL keeps its path on the test's host and port.
func (w *Webhooks) point(cc *admissionregistrationv1.WebhookClientConfig) {
	var servicePath *string
	if cc.Service != nil {
		servicePath = ptr.To(ptr.Deref(cc.Service.Path, ""))
	}
	url := w.urlFor(servicePath, cc.URL)
	cc.Service, cc.URL, cc.CABundle = nil, &url, w.CABundle
}

// urlFor is where a webhook given by a Service (the path it names) or by a
// URL is called on the test's server.
func (w *Webhooks) urlFor(servicePath, url *string) string {
	path := ""
	switch {
	case servicePath != nil:
		path = *servicePath
	case url != nil:
		if u, err := neturl.Parse(*url); err == nil {
			path = u.Path
		}
	}
	return w.URL(path)
}

// needsWebhookServer reports whether a CRD converts its versions through a
// webhook.
func needsWebhookServer(crds []*apiextensionsv1.CustomResourceDefinition) bool {
	for _, crd := range crds {
		if convertsByWebhook(crd) {
			return true
		}
	}
	return false
}

func convertsByWebhook(crd *apiextensionsv1.CustomResourceDefinition) bool {
	c := crd.Spec.Conversion
	return c != nil && c.Strategy == apiextensionsv1.WebhookConverter && c.Webhook != nil && c.Webhook.ClientConfig != nil
}

// pointConversion makes a CRD that converts through a webhook call the
// test's server, as envtest does: a Service becomes the URL of its path
// there, a URL keeps its path.
func (w *Webhooks) pointConversion(crd *apiextensionsv1.CustomResourceDefinition) {
	if !convertsByWebhook(crd) {
		return
	}
	cc := crd.Spec.Conversion.Webhook.ClientConfig
	var servicePath *string
	if cc.Service != nil {
		servicePath = ptr.To(ptr.Deref(cc.Service.Path, ""))
	}
	url := w.urlFor(servicePath, cc.URL)
	cc.Service, cc.URL, cc.CABundle = nil, &url, w.CABundle
}

// readWebhooks reads the webhook configurations of a YAML or JSON file or
// of the YAML and JSON files of a directory; other kinds are skipped.
func readWebhooks(path string) ([]any, error) {
	files, err := manifestFiles(path)
	if err != nil {
		return nil, err
	}
	var configs []any
	for _, file := range files {
		err := eachDocument(file, func(raw []byte) error {
			var meta metav1.TypeMeta
			if err := utilyaml.Unmarshal(raw, &meta); err != nil {
				return err
			}
			var obj any
			switch meta.Kind {
			case "MutatingWebhookConfiguration":
				obj = &admissionregistrationv1.MutatingWebhookConfiguration{}
			case "ValidatingWebhookConfiguration":
				obj = &admissionregistrationv1.ValidatingWebhookConfiguration{}
			default:
				return nil
			}
			if err := utilyaml.Unmarshal(raw, obj); err != nil {
				return err
			}
			configs = append(configs, obj)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	return configs, nil
}
