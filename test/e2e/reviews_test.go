package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
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
	// A review is a create: it answers with the managed fields the create
	// recorded, as kube-apiserver's does (a token request too, under its
	// sub-resource, and with the expiration its decoding defaulted); a
	// SelfSubjectReview, made anew, with none.
	if fields := sar.ManagedFields; len(fields) != 1 || fields[0].Manager != "e2e.test" || fields[0].Operation != metav1.ManagedFieldsOperationUpdate {
		t.Errorf("SubjectAccessReview managed fields: %+v", fields)
	}
	waitFor(t, 10*time.Second, "the default service account", func() bool {
		_, err := k.clientset().CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
	token, err := k.clientset().CoreV1().ServiceAccounts("default").CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fields := token.ManagedFields; len(fields) != 1 || fields[0].Subresource != "token" || !strings.Contains(string(fields[0].FieldsV1.Raw), `"f:expirationSeconds"`) {
		t.Errorf("TokenRequest managed fields: %+v", fields)
	}
	self, err := k.clientset().AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || len(self.ManagedFields) != 0 {
		t.Errorf("SelfSubjectReview: managed fields %+v, %v", self.ManagedFields, err)
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

// TestAdmissionPolicyParams: a ValidatingAdmissionPolicy reads its limit
// from a parameter object named by its binding, says why with a message
// expression, skips what its match conditions exclude, and a binding with
// the Warn action only warns.
func TestAdmissionPolicyParams(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	apply(t, k, `apiVersion: v1
kind: ConfigMap
metadata: {name: limits, namespace: default}
data: {maxReplicas: "3"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas-from-params}
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"]}
  matchConditions:
  - {name: not-exempt, expression: "!object.metadata.name.startsWith('exempt')"}
  validations:
  - expression: "object.spec.replicas <= int(params.data.maxReplicas)"
    messageExpression: "'replicas must be at most ' + params.data.maxReplicas"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replicas-from-params}
spec:
  policyName: replicas-from-params
  validationActions: [Deny]
  paramRef: {name: limits, namespace: default, parameterNotFoundAction: Deny}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: warn-only}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["secrets"]}
  validations:
  - {expression: "has(object.data) && size(object.data) > 0", message: "an empty secret"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: warn-only}
spec: {policyName: warn-only, validationActions: [Warn]}
`)
	// Fresh names: a create made before the policy took effect succeeds.
	waitFor(t, 20*time.Second, "the parameterised policy to deny", func() bool {
		name := fmt.Sprintf("big%d", time.Now().UnixNano())
		out, err := k.kubectl("create", "deployment", name, "--image=x", "--replicas=4")
		return err != nil && strings.Contains(out, `deployments.apps "`+name+`" is forbidden: ValidatingAdmissionPolicy 'replicas-from-params' with binding 'replicas-from-params' denied request: replicas must be at most 3`)
	})
	k.mustKubectl("create", "deployment", "exempt-big", "--image=x", "--replicas=4")
	k.mustKubectl("create", "deployment", "small", "--image=x", "--replicas=3")
	k.mustKubectl("patch", "configmap", "limits", "-p", `{"data":{"maxReplicas":"9"}}`)
	waitFor(t, 20*time.Second, "the policy to read the changed parameter", func() bool {
		_, err := k.kubectl("create", "deployment", fmt.Sprintf("big%d", time.Now().UnixNano()), "--image=x", "--replicas=4")
		return err == nil
	})
	waitFor(t, 20*time.Second, "the Warn binding to warn", func() bool {
		out, err := k.kubectl("create", "secret", "generic", fmt.Sprintf("s%d", time.Now().UnixNano()))
		return err == nil && strings.Contains(out, "Warning: Validation failed for ValidatingAdmissionPolicy 'warn-only' with binding 'warn-only': an empty secret")
	})
}

// TestPoliciesSeeSubresourceKinds: admission sees a write through a
// sub-resource as kube-apiserver shows it: an eviction, a binding and a
// token request as the kinds they are (a token request completed with its
// service account's name, namespace and UID, its audiences and its
// creation time), a scale as autoscaling/v1 Scales
// (mutating policies change the replicas through them).
func TestPoliciesSeeSubresourceKinds(t *testing.T) {
	k := startKapi(t, "--simulated-nodes=1", withoutDeploymentController)
	apply(t, k, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: kinds}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods/eviction", "serviceaccounts/token"]}
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["UPDATE"], resources: ["deployments/scale"]}
  validations:
  # A token request is seen completed, as kube's storage completes it
  # before validating admission.
  - expression: "request.subResource != 'token' || (object.metadata.name == 'robot' && object.metadata.namespace == 'default' && has(object.metadata.uid) && has(object.metadata.creationTimestamp) && size(object.spec.audiences) > 0)"
    message: "an incomplete token request"
  - expression: "request.subResource != 'scale' || object.spec.replicas < 100"
    messageExpression: "'saw ' + object.kind + ' of ' + object.apiVersion + ' with ' + string(object.spec.replicas) + ' replicas'"
  - expression: "request.subResource == 'scale'"
    messageExpression: "'saw ' + object.kind + ' of ' + object.apiVersion + ' as ' + request.kind.kind"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: kinds}
spec: {policyName: kinds, validationActions: [Deny]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: at-most-5}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["UPDATE"], resources: ["deployments/scale"]}
  matchConditions:
  - {name: too-many, expression: "object.spec.replicas > 5 && object.spec.replicas < 100"}
  failurePolicy: Fail
  reinvocationPolicy: Never
  mutations:
  # kube's apply configurations have no type for a Scale; a JSON patch works.
  - patchType: JSONPatch
    jsonPatch:
      expression: '[JSONPatch{op: "replace", path: "/spec/replicas", value: 5}]'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: at-most-5}
spec: {policyName: at-most-5}
`)
	k.mustKubectl("create", "deployment", "web", "--image=nginx")
	k.mustKubectl("run", "p", "--image=nginx")
	k.mustKubectl("create", "serviceaccount", "robot")
	waitFor(t, 20*time.Second, "the policy to see a token request", func() bool {
		out, _ := k.kubectl("create", "token", "robot")
		return strings.Contains(out, "saw TokenRequest of authentication.k8s.io/v1 as TokenRequest")
	})
	resp, body := rawDo(t, k, http.MethodPost, "/api/v1/namespaces/default/pods/p/eviction", "application/json", "",
		[]byte(`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p"}}`))
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), "saw Eviction of policy/v1 as Eviction") {
		t.Errorf("an eviction: %d %s", resp.StatusCode, body)
	}
	if out, err := k.kubectl("scale", "deployment", "web", "--replicas=100"); err == nil || !strings.Contains(out, "saw Scale of autoscaling/v1 with 100 replicas") {
		t.Errorf("kubectl scale to 100: %q %v", out, err)
	}
	waitFor(t, 20*time.Second, "the mutating policy to cap a scale", func() bool {
		k.mustKubectl("scale", "deployment", "web", "--replicas=9")
		out := k.mustKubectl("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}")
		return out == "5"
	})
}

// TestPoliciesSeeEquivalentKinds: a policy written for one version of a
// kind (matchPolicy Equivalent, the default) sees the objects of its
// other versions and groups converted to its own, as kube-apiserver's
// policies do: an autoscaling/v1 HorizontalPodAutoscaler as v2, a core
// Event as an events.k8s.io one.
func TestPoliciesSeeEquivalentKinds(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	apply(t, k, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: equivalent}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: ["autoscaling"], apiVersions: ["v2"], operations: ["CREATE"], resources: ["horizontalpodautoscalers"]}
    - {apiGroups: ["events.k8s.io"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["events"]}
  validations:
  - expression: "request.kind.group != 'autoscaling' || object.spec.maxReplicas <= 5"
    messageExpression: "'max ' + string(object.spec.maxReplicas) + ' via ' + request.requestKind.version + ' seen as ' + request.kind.version"
  - expression: "request.kind.group != 'events.k8s.io' || object.note != 'bad'"
    messageExpression: "'note ' + object.note + ' seen as ' + request.kind.group"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: equivalent}
spec: {policyName: equivalent, validationActions: [Deny]}
`)
	hpa := func(name string, max int) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":%q},
			"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"x"},"maxReplicas":%d}}`, name, max)
	}
	const hpas = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
	waitFor(t, 20*time.Second, "the policy to deny a v1 HPA", func() bool {
		resp, body := rawDo(t, k, http.MethodPost, hpas, "application/json", "", hpa(fmt.Sprintf("big-%d", time.Now().UnixNano()), 10))
		return resp.StatusCode == http.StatusUnprocessableEntity && strings.Contains(string(body), "denied request: max 10 via v1 seen as v2")
	})
	if resp, body := rawDo(t, k, http.MethodPost, hpas, "application/json", "", hpa("small", 3)); resp.StatusCode != http.StatusCreated {
		t.Errorf("a v1 HPA the policy allows: %d %s", resp.StatusCode, body)
	}
	event := func(name, message string) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Event","metadata":{"name":%q},"involvedObject":{"kind":"Pod","name":"p","namespace":"default"},
			"reason":"r","message":%q}`, name, message)
	}
	const events = "/api/v1/namespaces/default/events"
	if resp, body := rawDo(t, k, http.MethodPost, events, "application/json", "", event("fine", "fine")); resp.StatusCode != http.StatusCreated {
		t.Errorf("a core event the policy allows: %d %s", resp.StatusCode, body)
	}
	resp, body := rawDo(t, k, http.MethodPost, events, "application/json", "", event("bad", "bad"))
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), "denied request: note bad seen as events.k8s.io") {
		t.Errorf("a core event the policy refuses: %d %s", resp.StatusCode, body)
	}
}

// TestMutatingPoliciesReinvoke: when a mutating policy changes an object,
// the mutating plugins run once more, as kube-apiserver's chain reruns
// them: a sidecar a policy adds gets its service account token mount, and
// a policy whose reinvocationPolicy is IfNeeded sees a later policy's
// change whatever order the policies ran in.
func TestMutatingPoliciesReinvoke(t *testing.T) {
	k := startKapi(t)
	apply(t, k, `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: sidecar}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}
  matchConditions:
  - {name: unlabelled, expression: "!object.spec.containers.exists(c, c.name == 'sidecar')"}
  failurePolicy: Fail
  reinvocationPolicy: Never
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: "[JSONPatch{op: 'add', path: '/spec/containers/-', value: Object.spec.containers{name: 'sidecar', image: 'busybox'}}]"
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: sidecar}
spec: {policyName: sidecar}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: copy-source}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"]}
  failurePolicy: Fail
  reinvocationPolicy: IfNeeded
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >-
        has(object.metadata.annotations) && 'source' in object.metadata.annotations ?
        Object{metadata: Object.metadata{labels: {"copied": object.metadata.annotations["source"]}}} : Object{}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: copy-source}
spec: {policyName: copy-source}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: add-source}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"]}
  failurePolicy: Fail
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{annotations: {"source": "v"}}}'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: add-source}
spec: {policyName: add-source}
`)
	waitFor(t, 30*time.Second, "the default service account", func() bool {
		_, err := k.clientset().CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
	waitFor(t, 20*time.Second, "the policy to add a sidecar", func() bool {
		name := fmt.Sprintf("p%d", time.Now().UnixNano())
		pod, err := k.clientset().CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx"}}}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil || len(pod.Spec.Containers) != 2 {
			return false
		}
		if mounts := pod.Spec.Containers[1].VolumeMounts; len(mounts) != 1 || mounts[0].MountPath != "/var/run/secrets/kubernetes.io/serviceaccount" {
			t.Fatalf("the sidecar's mounts: %+v", mounts)
		}
		return true
	})
	copied := func() string {
		cm, err := k.clientset().CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			GenerateName: "copied-"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatal(err)
		}
		return cm.Labels["copied"]
	}
	waitFor(t, 20*time.Second, "both configmap policies to act", func() bool { return copied() == "v" })
	// The policies run in no set order: without the second run, the copy
	// is made only when it happens to run last.
	for range 8 {
		if got := copied(); got != "v" {
			t.Fatalf("an IfNeeded policy did not see a later policy's change: label %q", got)
		}
	}
}
