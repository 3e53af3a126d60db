package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestReviews: the authentication and authorization reviews answer as
// kube-apiserver's own storages do, against RBAC.
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
	review := &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{User: "ann", ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods", Namespace: "default"}},
	}
	sar, err := k.clientset().AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
	if err != nil || sar.Status.Allowed {
		t.Errorf("SubjectAccessReview of a user without roles: %+v, %v", sar.Status, err)
	}
	k.mustKubectl("create", "rolebinding", "ann-views", "--clusterrole=view", "--user=ann")
	waitFor(t, 10*time.Second, "ann's binding to reach the authorizer", func() bool {
		sar, err = k.clientset().AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		return err == nil && sar.Status.Allowed
	})
	if !strings.Contains(sar.Status.Reason, `RBAC: allowed by RoleBinding "ann-views/default" of ClusterRole "view" to User "ann"`) {
		t.Errorf("SubjectAccessReview reason %q", sar.Status.Reason)
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

// TestAdmissionPolicies: ValidatingAdmissionPolicies deny what their CEL
// rules refuse, with kube-apiserver's message, and MutatingAdmissionPolicies
// change what they match.
func TestAdmissionPolicies(t *testing.T) {
	k := startKapi(t)
	apply(t, k, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["deployments"]}
  validations:
  - {expression: "object.spec.replicas <= 5", message: "at most 5 replicas"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas}
spec: {policyName: max-replicas, validationActions: [Deny]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: add-label}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"]}
  failurePolicy: Fail
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"mutated": "yes"}}}'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: add-label}
spec: {policyName: add-label}
`)
	waitFor(t, 20*time.Second, "the validating policy to deny", func() bool {
		out, err := k.kubectl("create", "deployment", "big", "--image=x", "--replicas=9")
		return err != nil && strings.Contains(out, `deployments.apps "big" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas' denied request: at most 5 replicas`)
	})
	k.mustKubectl("create", "deployment", "small", "--image=x", "--replicas=2")
	waitFor(t, 20*time.Second, "the mutating policy to label a configmap", func() bool {
		name := fmt.Sprintf("m%d", time.Now().UnixNano())
		k.kubectl("create", "configmap", name)
		out, _ := k.kubectl("get", "configmap", name, "-o", "jsonpath={.metadata.labels.mutated}")
		return out == "yes"
	})
}
