package admission

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	apiadmission "k8s.io/apiserver/pkg/admission"
	admissionmetrics "k8s.io/apiserver/pkg/admission/metrics"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/kubernetes/plugin/pkg/admission/certificates/approval"
	"k8s.io/kubernetes/plugin/pkg/admission/certificates/ctbattest"
	"k8s.io/kubernetes/plugin/pkg/admission/certificates/signing"
	"k8s.io/kubernetes/plugin/pkg/admission/certificates/subjectrestriction"
	"k8s.io/kubernetes/plugin/pkg/admission/defaulttolerationseconds"
	"k8s.io/kubernetes/plugin/pkg/admission/limitranger"
	"k8s.io/kubernetes/plugin/pkg/admission/network/defaultingressclass"
	"k8s.io/kubernetes/plugin/pkg/admission/nodedeclaredfeatures"
	"k8s.io/kubernetes/plugin/pkg/admission/nodetaint"
	"k8s.io/kubernetes/plugin/pkg/admission/podresize"
	"k8s.io/kubernetes/plugin/pkg/admission/podtopologylabels"
	"k8s.io/kubernetes/plugin/pkg/admission/priority"
	"k8s.io/kubernetes/plugin/pkg/admission/runtimeclass"
	"k8s.io/kubernetes/plugin/pkg/admission/security/podsecurity"
	"k8s.io/kubernetes/plugin/pkg/admission/serviceaccount"
	"k8s.io/kubernetes/plugin/pkg/admission/storage/persistentvolume/resize"
	"k8s.io/kubernetes/plugin/pkg/admission/storage/storageclass/setdefault"
	"k8s.io/kubernetes/plugin/pkg/admission/storage/storageobjectinuseprotection"
)

// builtinPlugins are the admission plugins a default kube-apiserver 1.37
// enables, in its order, that act on the API alone (kapi runs
// NamespaceLifecycle, the policy and webhook plugins and ResourceQuota
// apart). LimitRanger defaults pods' and containers' resources from their
// namespace's LimitRanges and refuses pods and PersistentVolumeClaims
// outside a LimitRange's min, max or ratio, with its 403 message.
// StorageObjectInUseProtection gives PersistentVolumes, their claims and
// VolumeAttributesClasses the finalizers kapi's protection controllers
// remove.
// TaintNodesByCondition gives a new node the not-ready taint, which the
// node lifecycle controller takes off once the node reports Ready.
// NodeDeclaredFeatureValidator and PodResizeValidator refuse an update of
// a scheduled pod's spec, or its resize, that its node cannot honour. Left
// out is PodGroupProtection, which acts on PodGroups only, an API of a
// feature gate that is off.
var builtinPlugins = []struct {
	name     string
	register func(*apiadmission.Plugins)
}{
	{limitranger.PluginName, limitranger.Register},
	{serviceaccount.PluginName, serviceaccount.Register},
	{nodetaint.PluginName, nodetaint.Register},
	{podsecurity.PluginName, podsecurity.Register},
	{priority.PluginName, priority.Register},
	{defaulttolerationseconds.PluginName, defaulttolerationseconds.Register},
	{setdefault.PluginName, setdefault.Register},
	{storageobjectinuseprotection.PluginName, storageobjectinuseprotection.Register},
	{resize.PluginName, resize.Register},
	{runtimeclass.PluginName, runtimeclass.Register},
	{approval.PluginName, approval.Register},
	{signing.PluginName, signing.Register},
	{ctbattest.PluginName, ctbattest.Register},
	{subjectrestriction.PluginName, subjectrestriction.Register},
	{defaultingressclass.PluginName, defaultingressclass.Register},
	{podtopologylabels.PluginName, podtopologylabels.Register},
	{nodedeclaredfeatures.PluginName, nodedeclaredfeatures.Register},
	{podresize.PluginName, podresize.Register},
}

// builtinResources are the resources those plugins look at: other writes
// skip them (and the conversion to the internal form they need).
var builtinResources = map[schema.GroupResource]bool{
	{Resource: "pods"}: true, {Resource: "nodes"}: true, {Resource: "namespaces"}: true, {Resource: "persistentvolumes"}: true,
	{Resource: "persistentvolumeclaims"}: true, {Resource: "replicationcontrollers"}: true, {Resource: "podtemplates"}: true,
	{Group: "apps", Resource: "deployments"}: true, {Group: "apps", Resource: "replicasets"}: true,
	{Group: "apps", Resource: "statefulsets"}: true, {Group: "apps", Resource: "daemonsets"}: true,
	{Group: "batch", Resource: "jobs"}: true, {Group: "batch", Resource: "cronjobs"}: true,
	{Group: "networking.k8s.io", Resource: "ingresses"}:                    true,
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}: true,
	{Group: "certificates.k8s.io", Resource: "clustertrustbundles"}:        true,
	{Group: "scheduling.k8s.io", Resource: "priorityclasses"}:              true,
	{Group: "storage.k8s.io", Resource: "volumeattributesclasses"}:         true,
}

// Builtins runs kube-apiserver's built-in admission plugins (builtinPlugins)
// as kube-apiserver chains them, with their own initializers, on the
// internal forms of the objects. They read the API through informers, so
// they act once Start has run.
type Builtins struct {
	authorizer authorizer.Authorizer
	chain      apiadmission.Interface
	started    atomic.Bool
}

// NewBuiltins makes the chain's holder; Start makes the plugins.
func NewBuiltins(authorizer authorizer.Authorizer) *Builtins {
	return &Builtins{authorizer: authorizer}
}

// Start makes and initialises the plugins, as kube-apiserver's admission
// options do, and waits for their informers.
func (b *Builtins) Start(ctx context.Context, clients Clients) error {
	init, err := newPluginInit(ctx, clients, b.authorizer)
	if err != nil {
		return err
	}
	plugins := apiadmission.NewPlugins()
	var names []string
	for _, p := range builtinPlugins {
		p.register(plugins)
		names = append(names, p.name)
	}
	// Each plugin's calls are in kube-apiserver's
	// apiserver_admission_controller_admission_duration_seconds.
	chain, err := plugins.NewFromPlugins(names, noPluginConfig{}, init.PluginInitializers, apiadmission.DecoratorFunc(admissionmetrics.WithControllerMetrics))
	if err != nil {
		return fmt.Errorf("admission plugins: %w", err)
	}
	init.start(ctx)
	// Run as kube-apiserver's chain: the annotations the plugins add go
	// into the request's audit event.
	b.chain = apiadmission.WithAudit(chain)
	b.started.Store(true)
	return nil
}

// noPluginConfig gives every plugin its defaults.
type noPluginConfig struct{}

func (noPluginConfig) ConfigFor(string) (io.Reader, error) { return nil, nil }

func (b *Builtins) handles(a *Attributes) bool {
	return b.started.Load() && builtinResources[a.Resource.GroupResource()] && b.chain.Handles(apiadmission.Operation(a.Operation))
}

// Admit implements Mutator.
func (b *Builtins) Admit(ctx context.Context, a *Attributes) error {
	if !b.handles(a) {
		return nil
	}
	carry := onlyChanges
	if a.Operation == Update || a.Operation == Create && a.Subresource == "" {
		// kube's strategies of builtinResources convert what they create
		// or update through the internal form; a sub-resource's create is
		// an action (a pod's binding or eviction) that does not.
		carry = always
	}
	return onInternal(ctx, a, carry, func(attrs apiadmission.Attributes) error {
		return b.chain.(apiadmission.MutationInterface).Admit(ctx, attrs, objectInterfaces)
	})
}

// Validate implements Validator.
func (b *Builtins) Validate(ctx context.Context, a *Attributes) error {
	if !b.handles(a) {
		return nil
	}
	return onInternal(ctx, a, noChanges, func(attrs apiadmission.Attributes) error {
		return b.chain.(apiadmission.ValidationInterface).Validate(ctx, attrs, objectInterfaces)
	})
}
