package builtin

import (
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/kapi-dev/kapi/internal/codecs"
	"github.com/kapi-dev/kapi/internal/resources"
)

// candidateLabels are field labels some built-in kind accepts, and a few
// none does.
var candidateLabels = []string{
	"metadata.name", "metadata.namespace", "name",
	"spec.nodeName", "spec.host", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
	"spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName",
	"spec.unschedulable", "status.replicas", "status.successful", "spec.signerName", "spec.podName",
	"type", "involvedObject.kind", "involvedObject.name", "involvedObject.uid", "reason", "reportingComponent",
	"source", "regarding.name", "regarding.kind", "deprecatedSource", "spec.clusterIP", "spec.type",
	"spec.claimRef.name", "spec.volumeName", "status.unknown", "nonsense",
}

// TestFieldLabelsMatchKube checks the resources package's own field label
// conversion (which labels a field selector may use, what they become, and
// the message refusing the others; used where kube's is not installed)
// against the conversion functions kube's install packages register, for
// every built-in resource and candidate label; and that each label kube
// accepts is a field kapi's objects expose to the selector.
func TestFieldLabelsMatchKube(t *testing.T) {
	checked := 0
	for _, g := range resources.NewBuiltin().Groups() {
		for _, v := range g.Versions {
			for _, info := range v.Resources {
				gvk := info.GroupVersionKind()
				if !legacyscheme.Scheme.Recognizes(gvk) {
					continue
				}
				for _, label := range candidateLabels {
					wantLabel, wantValue, wantErr := legacyscheme.Scheme.ConvertFieldLabel(gvk, label, "x")
					sel, gotErr := info.ConvertFieldSelector(fields.OneTermEqualSelector(label, "x"))
					checked++
					switch {
					case (wantErr == nil) != (gotErr == nil):
						t.Errorf("%s %s: kapi %v, kube %v", info.GroupVersionResource(), label, gotErr, wantErr)
					case wantErr != nil && gotErr.Error() != wantErr.Error():
						t.Errorf("%s %s: kapi says %q, kube %q", info.GroupVersionResource(), label, gotErr, wantErr)
					case wantErr == nil && sel.String() != fields.OneTermEqualSelector(wantLabel, wantValue).String():
						t.Errorf("%s %s: kapi converts to %q, kube to %s=%s", info.GroupVersionResource(), label, sel, wantLabel, wantValue)
					case wantErr == nil && !exposes(info, wantLabel) && !unexposed(info, wantLabel):
						t.Errorf("%s: kube accepts %s, kapi's objects do not expose it", info.GroupVersionResource(), wantLabel)
					}
				}
			}
		}
	}
	if checked < 1000 {
		t.Errorf("checked only %d labels", checked)
	}
}

// unexposed reports the labels kube accepts but its GetAttrs does not
// return (a selector on them compares with the empty string): a
// cluster-scoped object's namespace, and pods' status.podIPs.
func unexposed(info *resources.Info, label string) bool {
	return (!info.Namespaced && label == "metadata.namespace") || (info.Resource == "pods" && label == "status.podIPs")
}

// exposes reports whether a zero object of the resource's kind has field
// in its selectable fields.
func exposes(info *resources.Info, field string) bool {
	obj, err := codecs.Scheme.New(info.GroupVersionKind())
	if err != nil {
		return false
	}
	_, ok := info.SelectableFields(obj)[field]
	return ok
}
