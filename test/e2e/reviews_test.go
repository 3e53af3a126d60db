package e2e

import (
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestReviews: the authentication and authorization reviews answer as
// kube-apiserver's own storages do, for what kapi has (certificates, and
// an authorizer that allows everything until RBAC exists).
func TestReviews(t *testing.T) {
	k := startKapi(t)
	if out := k.mustKubectl("auth", "whoami"); !strings.Contains(out, "kapi-admin") || !strings.Contains(out, "system:masters") {
		t.Errorf("kubectl auth whoami:\n%s", out)
	}
	if out := strings.TrimSpace(k.mustKubectl("auth", "can-i", "delete", "pods")); out != "yes" {
		t.Errorf("kubectl auth can-i delete pods = %q", out)
	}
	if out := k.mustKubectl("auth", "can-i", "--list"); !strings.Contains(out, "*.*") {
		t.Errorf("kubectl auth can-i --list:\n%s", out)
	}
	sar, err := k.clientset().AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{User: "ann", ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods"}},
	}, metav1.CreateOptions{})
	if err != nil || !sar.Status.Allowed {
		t.Errorf("SubjectAccessReview: %+v, %v", sar.Status, err)
	}
	_, err = k.clientset().AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "exactly one of nonResourceAttributes or resourceAttributes must be specified") {
		t.Errorf("an empty SubjectAccessReview: %v", err)
	}
	err = k.clientset().AuthorizationV1().RESTClient().Get().Resource("subjectaccessreviews").Do(ctx).Error()
	if !apierrors.IsMethodNotSupported(err) {
		t.Errorf("listing reviews: %v, want 405", err)
	}
}

// TestPolicyTypeChecking: kube-controller-manager's policy status
// controller type-checks a ValidatingAdmissionPolicy's expressions against
// the matched kinds' schemas (from kapi's OpenAPI) and reports warnings.
func TestPolicyTypeChecking(t *testing.T) {
	k := startKapi(t)
	apply(t, k, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"]}
  validations:
  - expression: "object.spec.replicas <= 5"
  - expression: "object.spec.nope == 1"
`)
	waitFor(t, 20*time.Second, "the policy's type checking", func() bool {
		out, _ := k.kubectl("get", "validatingadmissionpolicy", "replicas", "-o", "jsonpath={.status.typeChecking.expressionWarnings[*].fieldRef}")
		return out == "spec.validations[1].expression"
	})
}
