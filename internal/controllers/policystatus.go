package controllers

import (
	"context"

	pluginvalidatingadmissionpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/kubernetes/pkg/controller/validatingadmissionpolicystatus"
)

// policyStatusWorkers is kube-controller-manager's default.
const policyStatusWorkers = 5

// runPolicyStatus starts kube-controller-manager's ValidatingAdmissionPolicy
// status controller: it type-checks each policy's CEL expressions against
// the schemas of the kinds it matches and reports the warnings in
// status.typeChecking. The schemas come from the server's own OpenAPI v3
// (kube-controller-manager also compiles in the built-in ones; kapi
// serves the same).
func runPolicyStatus(ctx context.Context, start func(func()), client kubernetes.Interface, factory informers.SharedInformerFactory, discoveryClient discovery.DiscoveryInterface) error {
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discoveryClient))
	typeChecker := &pluginvalidatingadmissionpolicy.TypeChecker{
		SchemaResolver: &resolver.ClientDiscoveryResolver{Discovery: discoveryClient},
		RestMapper:     mapper,
	}
	c, err := validatingadmissionpolicystatus.NewController(
		factory.Admissionregistration().V1().ValidatingAdmissionPolicies(),
		client.AdmissionregistrationV1().ValidatingAdmissionPolicies(),
		typeChecker,
	)
	if err != nil {
		return err
	}
	start(func() { c.Run(ctx, policyStatusWorkers) })
	return nil
}
