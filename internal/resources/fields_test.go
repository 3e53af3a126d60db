package resources

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func objectMeta(name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace}
}

// customInfo is a custom resource kapi might serve from a CRD.
func customInfo(namespaced bool) *Info {
	return &Info{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: namespaced}
}

func TestSelectableFields(t *testing.T) {
	r := NewBuiltin()
	involved := corev1.ObjectReference{
		Kind: "Pod", Namespace: "ns", Name: "p", UID: "uid-1",
		APIVersion: "v1", ResourceVersion: "42", FieldPath: "spec.containers{c}",
	}
	wantEvent := fields.Set{
		"metadata.name": "e", "metadata.namespace": "ns",
		"involvedObject.kind": "Pod", "involvedObject.namespace": "ns", "involvedObject.name": "p",
		"involvedObject.uid": "uid-1", "involvedObject.apiVersion": "v1",
		"involvedObject.resourceVersion": "42", "involvedObject.fieldPath": "spec.containers{c}",
		"reason": "Started", "reportingComponent": "kubelet", "source": "kubelet-src", "type": "Normal",
	}
	tests := []struct {
		name                     string
		group, version, resource string
		info                     *Info // instead of a registry lookup
		obj                      runtime.Object
		want                     fields.Set
	}{
		{
			name: "pod", resource: "pods",
			obj: &corev1.Pod{
				ObjectMeta: objectMeta("p", "ns"),
				Spec: corev1.PodSpec{
					NodeName: "n1", RestartPolicy: corev1.RestartPolicyNever, SchedulerName: "sched",
					ServiceAccountName: "sa", HostNetwork: true,
				},
				Status: corev1.PodStatus{
					Phase: corev1.PodRunning, PodIP: "10.0.0.1", NominatedNodeName: "n2",
					PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}},
				},
			},
			want: fields.Set{
				"metadata.name": "p", "metadata.namespace": "ns",
				"spec.nodeName": "n1", "spec.restartPolicy": "Never", "spec.schedulerName": "sched",
				"spec.serviceAccountName": "sa", "spec.hostNetwork": "true",
				"status.phase": "Running", "status.podIP": "10.0.0.1", "status.nominatedNodeName": "n2",
			},
		},
		{
			name: "pod empty: hostNetwork false, podIP from podIPs", resource: "pods",
			obj: &corev1.Pod{
				ObjectMeta: objectMeta("p", "ns"),
				Status:     corev1.PodStatus{PodIPs: []corev1.PodIP{{IP: "fd00::2"}}},
			},
			want: fields.Set{
				"metadata.name": "p", "metadata.namespace": "ns",
				"spec.nodeName": "", "spec.restartPolicy": "", "spec.schedulerName": "",
				"spec.serviceAccountName": "", "spec.hostNetwork": "false",
				"status.phase": "", "status.podIP": "fd00::2", "status.nominatedNodeName": "",
			},
		},
		{
			name: "pod unstructured", resource: "pods",
			obj: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{"name": "p", "namespace": "ns"},
				"spec":     map[string]any{"nodeName": "n1", "hostNetwork": true},
				"status":   map[string]any{"phase": "Pending"},
			}},
			want: fields.Set{
				"metadata.name": "p", "metadata.namespace": "ns",
				"spec.nodeName": "n1", "spec.restartPolicy": "", "spec.schedulerName": "",
				"spec.serviceAccountName": "", "spec.hostNetwork": "true",
				"status.phase": "Pending", "status.podIP": "", "status.nominatedNodeName": "",
			},
		},
		{
			name: "node", resource: "nodes",
			obj:  &corev1.Node{ObjectMeta: objectMeta("n1", ""), Spec: corev1.NodeSpec{Unschedulable: true}},
			want: fields.Set{"metadata.name": "n1", "spec.unschedulable": "true"},
		},
		{
			name: "node schedulable", resource: "nodes",
			obj:  &corev1.Node{ObjectMeta: objectMeta("n1", "")},
			want: fields.Set{"metadata.name": "n1", "spec.unschedulable": "false"},
		},
		{
			name: "namespace keeps the legacy name field", resource: "namespaces",
			obj:  &corev1.Namespace{ObjectMeta: objectMeta("team", ""), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}},
			want: fields.Set{"metadata.name": "team", "status.phase": "Terminating", "name": "team"},
		},
		{
			name: "secret", resource: "secrets",
			obj:  &corev1.Secret{ObjectMeta: objectMeta("s", "ns"), Type: corev1.SecretTypeTLS},
			want: fields.Set{"metadata.name": "s", "metadata.namespace": "ns", "type": "kubernetes.io/tls"},
		},
		{
			name: "service", resource: "services",
			obj: &corev1.Service{ObjectMeta: objectMeta("svc", "ns"),
				Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10", Type: corev1.ServiceTypeNodePort}},
			want: fields.Set{"metadata.name": "svc", "metadata.namespace": "ns", "spec.clusterIP": "10.96.0.10", "spec.type": "NodePort"},
		},
		{
			name: "replicationcontroller", resource: "replicationcontrollers",
			obj: &corev1.ReplicationController{ObjectMeta: objectMeta("rc", "ns"),
				Status: corev1.ReplicationControllerStatus{Replicas: 12}},
			want: fields.Set{"metadata.name": "rc", "metadata.namespace": "ns", "status.replicas": "12"},
		},
		{
			name: "persistentvolume keeps the legacy name field", resource: "persistentvolumes",
			obj:  &corev1.PersistentVolume{ObjectMeta: objectMeta("pv1", "")},
			want: fields.Set{"metadata.name": "pv1", "name": "pv1"},
		},
		{
			name: "persistentvolumeclaim keeps the legacy name field", resource: "persistentvolumeclaims",
			obj:  &corev1.PersistentVolumeClaim{ObjectMeta: objectMeta("data", "ns")},
			want: fields.Set{"metadata.name": "data", "metadata.namespace": "ns", "name": "data"},
		},
		{
			name: "core event", resource: "events",
			obj: &corev1.Event{ObjectMeta: objectMeta("e", "ns"), InvolvedObject: involved, Reason: "Started",
				ReportingController: "kubelet", Source: corev1.EventSource{Component: "kubelet-src"}, Type: "Normal"},
			want: wantEvent,
		},
		{
			name: "core event without source falls back to reportingComponent", resource: "events",
			obj: &corev1.Event{ObjectMeta: objectMeta("e", "ns"), ReportingController: "ctrl"},
			want: fields.Set{
				"metadata.name": "e", "metadata.namespace": "ns",
				"involvedObject.kind": "", "involvedObject.namespace": "", "involvedObject.name": "",
				"involvedObject.uid": "", "involvedObject.apiVersion": "", "involvedObject.resourceVersion": "",
				"involvedObject.fieldPath": "", "reason": "", "reportingComponent": "ctrl", "source": "ctrl", "type": "",
			},
		},
		{
			name: "events.k8s.io event", group: "events.k8s.io", resource: "events",
			obj: &eventsv1.Event{ObjectMeta: objectMeta("e", "ns"), Regarding: involved, Reason: "Started",
				ReportingController: "kubelet", DeprecatedSource: corev1.EventSource{Component: "kubelet-src"}, Type: "Normal"},
			want: wantEvent,
		},
		{
			name: "replicaset", group: "apps", resource: "replicasets",
			obj:  &appsv1.ReplicaSet{ObjectMeta: objectMeta("rs", "ns"), Status: appsv1.ReplicaSetStatus{Replicas: 3}},
			want: fields.Set{"metadata.name": "rs", "metadata.namespace": "ns", "status.replicas": "3"},
		},
		{
			name: "deployment has only metadata", group: "apps", resource: "deployments",
			obj:  deployment(),
			want: fields.Set{"metadata.name": "web", "metadata.namespace": "default"},
		},
		{
			name: "job", group: "batch", resource: "jobs",
			obj:  &batchv1.Job{ObjectMeta: objectMeta("j", "ns"), Status: batchv1.JobStatus{Succeeded: 7}},
			want: fields.Set{"metadata.name": "j", "metadata.namespace": "ns", "status.successful": "7"},
		},
		{
			name: "job unstructured", group: "batch", resource: "jobs",
			obj: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "batch/v1", "kind": "Job",
				"metadata": map[string]any{"name": "j", "namespace": "ns"},
				"status":   map[string]any{"succeeded": int64(1)},
			}},
			want: fields.Set{"metadata.name": "j", "metadata.namespace": "ns", "status.successful": "1"},
		},
		{
			name: "csr", group: "certificates.k8s.io", resource: "certificatesigningrequests",
			obj: &certificatesv1.CertificateSigningRequest{ObjectMeta: objectMeta("csr", ""),
				Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: certificatesv1.KubeletServingSignerName}},
			want: fields.Set{"metadata.name": "csr", "spec.signerName": "kubernetes.io/kubelet-serving"},
		},
		{
			name: "clustertrustbundle", group: "certificates.k8s.io", resource: "clustertrustbundles",
			obj: &certificatesv1.ClusterTrustBundle{ObjectMeta: objectMeta("b", ""),
				Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/signer"}},
			want: fields.Set{"metadata.name": "b", "spec.signerName": "example.com/signer"},
		},
		{
			name: "podcertificaterequest", group: "certificates.k8s.io", resource: "podcertificaterequests",
			obj: &certificatesv1.PodCertificateRequest{ObjectMeta: objectMeta("pcr", "ns"),
				Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/signer", PodName: "p", NodeName: "n1"}},
			want: fields.Set{"metadata.name": "pcr", "metadata.namespace": "ns",
				"spec.signerName": "example.com/signer", "spec.podName": "p", "spec.nodeName": "n1"},
		},
		{
			name: "configmap has only metadata", resource: "configmaps",
			obj:  &corev1.ConfigMap{ObjectMeta: objectMeta("cm", "ns")},
			want: fields.Set{"metadata.name": "cm", "metadata.namespace": "ns"},
		},
		{
			name: "cluster-scoped resource has no namespace field", group: "rbac.authorization.k8s.io", resource: "clusterroles",
			obj:  &rbacv1.ClusterRole{ObjectMeta: objectMeta("admin", "")},
			want: fields.Set{"metadata.name": "admin"},
		},
		{
			name: "custom resource", info: customInfo(true),
			obj: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"name": "w", "namespace": "ns"},
				"spec":     map[string]any{"size": int64(3)},
			}},
			want: fields.Set{"metadata.name": "w", "metadata.namespace": "ns"},
		},
		{
			name: "wrong type gets only metadata", resource: "pods",
			obj:  &corev1.ConfigMap{ObjectMeta: objectMeta("cm", "ns")},
			want: fields.Set{"metadata.name": "cm", "metadata.namespace": "ns"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info := tc.info
			if info == nil {
				version := tc.version
				if version == "" {
					version = "v1"
				}
				info = lookup(t, r, tc.group, version, tc.resource)
			}
			if got := info.SelectableFields(tc.obj); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("SelectableFields() =\n  %v\nwant\n  %v", got, tc.want)
			}
			// FieldsOf answers as the set does, for its fields and for the
			// metadata fields it may lack.
			for _, field := range append(slices.Collect(maps.Keys(tc.want)), "metadata.name", "metadata.namespace", "spec.none") {
				lazy := info.FieldsOf(tc.obj)
				if lazy.Has(field) != tc.want.Has(field) || lazy.Get(field) != tc.want.Get(field) {
					t.Errorf("FieldsOf(): %s is %v %q, SelectableFields has %v %q", field, lazy.Has(field), lazy.Get(field), tc.want.Has(field), tc.want.Get(field))
				}
			}
		})
	}
}

// TestSelectableFieldsEveryBuiltin checks the metadata fields of every served
// resource, from a minimal unstructured object.
func TestSelectableFieldsEveryBuiltin(t *testing.T) {
	r := NewBuiltin()
	for _, g := range r.Groups() {
		for _, v := range g.Versions {
			for _, info := range v.Resources {
				t.Run(info.GroupVersionResource().String(), func(t *testing.T) {
					ns := ""
					if info.Namespaced {
						ns = "ns"
					}
					obj := &unstructured.Unstructured{Object: map[string]any{
						"apiVersion": schema.GroupVersion{Group: info.Group, Version: info.Version}.String(),
						"kind":       info.Kind,
						"metadata":   map[string]any{"name": "x", "namespace": ns},
					}}
					got := info.SelectableFields(obj)
					if got["metadata.name"] != "x" {
						t.Errorf("metadata.name = %q, want x", got["metadata.name"])
					}
					if v, ok := got["metadata.namespace"]; ok != info.Namespaced || v != ns {
						t.Errorf("metadata.namespace = %q (present %v), want present only when namespaced (%v)", v, ok, info.Namespaced)
					}
					if err := info.CheckFieldSelector(fields.OneTermEqualSelector("metadata.name", "x")); err != nil {
						t.Errorf("metadata.name rejected: %v", err)
					}
				})
			}
		}
	}
}

func TestFieldSupportsAreServed(t *testing.T) {
	r := NewBuiltin()
	served := map[schema.GroupResource]bool{}
	for _, g := range r.Groups() {
		for _, v := range g.Versions {
			for _, info := range v.Resources {
				served[info.groupResource()] = true
			}
		}
	}
	for gr := range fieldSupports {
		if !served[gr] {
			t.Errorf("fieldSupports has %v, which kapi does not serve", gr)
		}
	}
}

const (
	notKnown = `"%s" is not a known field selector: only "metadata.name", "metadata.namespace"`
	notSupp  = `field label not supported: %s`
)

func TestCheckFieldSelector(t *testing.T) {
	r := NewBuiltin()
	type gvr struct{ group, version, resource string }
	core := func(resource string) gvr { return gvr{"", "v1", resource} }
	tests := []struct {
		res gvr
		// accepted lists labels the resource accepts.
		accepted []string
		// rejected maps a rejected label to its message format (%s is the label).
		rejected map[string]string
	}{
		{
			res: core("pods"),
			accepted: []string{"metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy",
				"spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
				"status.podIP", "status.podIPs", "status.nominatedNodeName", "spec.host"},
			rejected: map[string]string{"status.hostIP": notSupp, "spec.nodename": notSupp, "name": notSupp},
		},
		{
			res:      core("nodes"),
			accepted: []string{"metadata.name", "spec.unschedulable"},
			rejected: map[string]string{"metadata.namespace": notSupp, "spec.podCIDR": notSupp},
		},
		{
			res:      core("namespaces"),
			accepted: []string{"metadata.name", "status.phase"},
			rejected: map[string]string{"metadata.namespace": notSupp, "name": notSupp},
		},
		{
			res:      core("secrets"),
			accepted: []string{"metadata.name", "metadata.namespace", "type"},
			rejected: map[string]string{"data": notSupp},
		},
		{
			res:      core("services"),
			accepted: []string{"metadata.name", "metadata.namespace", "spec.clusterIP", "spec.type"},
			rejected: map[string]string{"spec.clusterIPs": notSupp},
		},
		{
			res:      core("replicationcontrollers"),
			accepted: []string{"metadata.name", "metadata.namespace", "status.replicas"},
			rejected: map[string]string{"spec.replicas": notSupp},
		},
		{
			res: core("events"),
			accepted: []string{"metadata.name", "metadata.namespace", "involvedObject.kind",
				"involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
				"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
				"reason", "reportingComponent", "source", "type"},
			rejected: map[string]string{"regarding.name": notSupp, "reportingController": notSupp, "message": notSupp},
		},
		{
			res: gvr{"events.k8s.io", "v1", "events"},
			accepted: []string{"metadata.name", "metadata.namespace", "regarding.kind", "regarding.namespace",
				"regarding.name", "regarding.uid", "regarding.apiVersion", "regarding.resourceVersion",
				"regarding.fieldPath", "reason", "reportingController", "type"},
			rejected: map[string]string{"involvedObject.name": notSupp, "reportingComponent": notSupp, "note": notSupp},
		},
		{
			res:      core("configmaps"),
			accepted: []string{"metadata.name", "metadata.namespace"},
			rejected: map[string]string{"data": notKnown, "name": notKnown},
		},
		{
			res:      core("persistentvolumes"),
			accepted: []string{"metadata.name", "metadata.namespace"},
			rejected: map[string]string{"name": notKnown, "spec.storageClassName": notKnown},
		},
		{
			res:      core("persistentvolumeclaims"),
			accepted: []string{"metadata.name", "metadata.namespace"},
			rejected: map[string]string{"name": notKnown},
		},
		{
			res:      gvr{"apps", "v1", "replicasets"},
			accepted: []string{"metadata.name", "metadata.namespace"},
			rejected: map[string]string{"status.replicas": notKnown},
		},
		{
			res:      gvr{"apps", "v1", "deployments"},
			accepted: []string{"metadata.name", "metadata.namespace"},
			rejected: map[string]string{"status.replicas": notKnown},
		},
		{
			res:      gvr{"batch", "v1", "jobs"},
			accepted: []string{"metadata.name", "metadata.namespace", "status.successful"},
			rejected: map[string]string{"status.succeeded": `field label %q not supported for Job`},
		},
		{
			res:      gvr{"batch", "v1", "cronjobs"},
			accepted: []string{"metadata.name", "metadata.namespace"},
			rejected: map[string]string{"status.successful": notKnown},
		},
		{
			res:      gvr{"certificates.k8s.io", "v1", "certificatesigningrequests"},
			accepted: []string{"metadata.name", "spec.signerName"},
			rejected: map[string]string{"metadata.namespace": notSupp, "spec.username": notSupp},
		},
		{
			res:      gvr{"certificates.k8s.io", "v1", "clustertrustbundles"},
			accepted: []string{"metadata.name", "spec.signerName"},
			rejected: map[string]string{"metadata.namespace": notSupp},
		},
		{
			res:      gvr{"certificates.k8s.io", "v1", "podcertificaterequests"},
			accepted: []string{"metadata.name", "spec.signerName", "spec.podName", "spec.nodeName"},
			rejected: map[string]string{"metadata.namespace": notSupp, "spec.podUID": notSupp},
		},
		{
			// Cluster-scoped with the default conversion: metadata.namespace
			// is accepted (and matches only "").
			res:      gvr{"rbac.authorization.k8s.io", "v1", "clusterroles"},
			accepted: []string{"metadata.name", "metadata.namespace"},
			rejected: map[string]string{"rules": notKnown},
		},
		{
			res:      gvr{"storage.k8s.io", "v1", "volumeattachments"},
			accepted: []string{"metadata.name", "metadata.namespace"},
			rejected: map[string]string{"spec.nodeName": notKnown},
		},
	}
	for _, tc := range tests {
		info := lookup(t, r, tc.res.group, tc.res.version, tc.res.resource)
		t.Run(info.GroupVersionResource().String(), func(t *testing.T) {
			for _, label := range tc.accepted {
				for _, sel := range []fields.Selector{
					fields.OneTermEqualSelector(label, "v"),
					fields.OneTermNotEqualSelector(label, "v"),
				} {
					if err := info.CheckFieldSelector(sel); err != nil {
						t.Errorf("CheckFieldSelector(%q) = %v, want nil", sel, err)
					}
				}
			}
			for label, format := range tc.rejected {
				want := sprintfLabel(format, label)
				checkBadRequest(t, info, fields.OneTermEqualSelector(label, "v"), want)
				checkBadRequest(t, info, fields.OneTermNotEqualSelector(label, "v"), want)
				// A supported requirement next to it does not help.
				checkBadRequest(t, info, fields.AndSelectors(
					fields.OneTermEqualSelector("metadata.name", "x"),
					fields.OneTermEqualSelector(label, "v")), want)
			}
		})
	}
}

func TestCheckFieldSelectorCustomResource(t *testing.T) {
	tests := []struct {
		namespaced bool
		label      string
		want       string // "" for accepted
	}{
		{true, "metadata.name", ""},
		{true, "metadata.namespace", ""},
		{true, "spec.size", "field label not supported: spec.size"},
		{false, "metadata.name", ""},
		{false, "metadata.namespace", "field label not supported: metadata.namespace"},
		{false, "status.phase", "field label not supported: status.phase"},
	}
	for _, tc := range tests {
		info := customInfo(tc.namespaced)
		sel := fields.OneTermEqualSelector(tc.label, "v")
		if tc.want == "" {
			if err := info.CheckFieldSelector(sel); err != nil {
				t.Errorf("namespaced=%v: CheckFieldSelector(%q) = %v, want nil", tc.namespaced, sel, err)
			}
			continue
		}
		checkBadRequest(t, info, sel, tc.want)
	}
}

func TestCheckFieldSelectorEmpty(t *testing.T) {
	info := lookup(t, NewBuiltin(), "", "v1", "configmaps")
	for _, sel := range []fields.Selector{nil, fields.Everything(), fields.Nothing()} {
		if err := info.CheckFieldSelector(sel); err != nil {
			t.Errorf("CheckFieldSelector(%v) = %v, want nil", sel, err)
		}
	}
}

func TestCheckFieldSelectorParsed(t *testing.T) {
	// kube-apiserver converts the selector ParseSelector built; its terms are
	// sorted, so the first unsupported one in sorted order is reported.
	info := lookup(t, NewBuiltin(), "", "v1", "pods")
	sel, err := fields.ParseSelector("status.phase!=Running,zeta=1,spec.nodeName=n1,alpha=2")
	if err != nil {
		t.Fatal(err)
	}
	checkBadRequest(t, info, sel, "field label not supported: alpha")
}

func TestConvertFieldSelector(t *testing.T) {
	r := NewBuiltin()
	pods := lookup(t, r, "", "v1", "pods")
	events := lookup(t, r, "events.k8s.io", "v1", "events")
	coreEvents := lookup(t, r, "", "v1", "events")
	tests := []struct {
		name     string
		info     *Info
		selector string
		want     string
	}{
		{"pods spec.host is spec.nodeName", pods, "spec.host=n1", "spec.nodeName=n1"},
		{"pods unchanged", pods, "spec.nodeName=n1,status.phase!=Running", "spec.nodeName=n1,status.phase!=Running"},
		{"events.k8s.io regarding", events, "regarding.name=p,reportingController=kubelet",
			"involvedObject.name=p,reportingComponent=kubelet"},
		{"core events unchanged", coreEvents, "involvedObject.name=p", "involvedObject.name=p"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := fields.ParseSelector(tc.selector)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tc.info.ConvertFieldSelector(sel)
			if err != nil {
				t.Fatalf("ConvertFieldSelector(%q) error: %v", tc.selector, err)
			}
			if got.String() != tc.want {
				t.Errorf("ConvertFieldSelector(%q) = %q, want %q", tc.selector, got.String(), tc.want)
			}
		})
	}
}

// TestConvertedSelectorMatches runs both steps as kube does: convert the
// request's selector, then match it against SelectableFields.
func TestConvertedSelectorMatches(t *testing.T) {
	r := NewBuiltin()
	pod := &corev1.Pod{ObjectMeta: objectMeta("p", "ns"), Spec: corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	ev := &eventsv1.Event{ObjectMeta: objectMeta("e", "ns"),
		Regarding: corev1.ObjectReference{Kind: "Pod", Name: "p"}, ReportingController: "kubelet", Type: "Normal"}
	tests := []struct {
		info     *Info
		obj      runtime.Object
		selector string
		want     bool
	}{
		{lookup(t, r, "", "v1", "pods"), pod, "spec.host=n1", true},
		{lookup(t, r, "", "v1", "pods"), pod, "spec.nodeName=n2", false},
		{lookup(t, r, "", "v1", "pods"), pod, "spec.hostNetwork=false,status.phase=Running", true},
		{lookup(t, r, "", "v1", "pods"), pod, "metadata.namespace=ns,metadata.name!=p", false},
		{lookup(t, r, "events.k8s.io", "v1", "events"), ev, "regarding.kind=Pod,regarding.name=p", true},
		{lookup(t, r, "events.k8s.io", "v1", "events"), ev, "reportingController=kubelet,type=Normal", true},
		{lookup(t, r, "events.k8s.io", "v1", "events"), ev, "regarding.name=q", false},
	}
	for _, tc := range tests {
		sel, err := fields.ParseSelector(tc.selector)
		if err != nil {
			t.Fatal(err)
		}
		conv, err := tc.info.ConvertFieldSelector(sel)
		if err != nil {
			t.Fatalf("%s %q: %v", tc.info.Resource, tc.selector, err)
		}
		if got := conv.Matches(tc.info.SelectableFields(tc.obj)); got != tc.want {
			t.Errorf("%s/%s %q matches = %v, want %v", tc.info.Group, tc.info.Resource, tc.selector, got, tc.want)
		}
	}
}

// sprintfLabel formats a message that takes the label once, as %s or %q.
func sprintfLabel(format, label string) string {
	return fmt.Sprintf(format, label)
}

func checkBadRequest(t *testing.T, info *Info, sel fields.Selector, wantMessage string) {
	t.Helper()
	err := info.CheckFieldSelector(sel)
	if err == nil {
		t.Errorf("%s: CheckFieldSelector(%q) = nil, want %q", info.Resource, sel, wantMessage)
		return
	}
	var status *apierrors.StatusError
	if !errors.As(err, &status) {
		t.Errorf("%s: CheckFieldSelector(%q) = %T, want *StatusError", info.Resource, sel, err)
		return
	}
	s := status.Status()
	if s.Code != http.StatusBadRequest || s.Reason != metav1.StatusReasonBadRequest || s.Status != metav1.StatusFailure {
		t.Errorf("%s: status = %d %s %s, want 400 BadRequest Failure", info.Resource, s.Code, s.Reason, s.Status)
	}
	if s.Message != wantMessage {
		t.Errorf("%s: CheckFieldSelector(%q) message = %q, want %q", info.Resource, sel, s.Message, wantMessage)
	}
	if _, err := info.ConvertFieldSelector(sel); err == nil || err.Error() != wantMessage {
		t.Errorf("%s: ConvertFieldSelector(%q) error = %v, want %q", info.Resource, sel, err, wantMessage)
	}
}
