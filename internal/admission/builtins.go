package admission

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	apiadmission "k8s.io/apiserver/pkg/admission"
	admissionmetrics "k8s.io/apiserver/pkg/admission/metrics"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/kubernetes/plugin/pkg/admission/alwayspullimages"
	"k8s.io/kubernetes/plugin/pkg/admission/antiaffinity"
	"k8s.io/kubernetes/plugin/pkg/admission/certificates/approval"
	"k8s.io/kubernetes/plugin/pkg/admission/certificates/ctbattest"
	"k8s.io/kubernetes/plugin/pkg/admission/certificates/signing"
	"k8s.io/kubernetes/plugin/pkg/admission/certificates/subjectrestriction"
	"k8s.io/kubernetes/plugin/pkg/admission/defaulttolerationseconds"
	"k8s.io/kubernetes/plugin/pkg/admission/extendedresourcetoleration"
	"k8s.io/kubernetes/plugin/pkg/admission/limitranger"
	"k8s.io/kubernetes/plugin/pkg/admission/network/defaultingressclass"
	"k8s.io/kubernetes/plugin/pkg/admission/network/denyserviceexternalips"
	"k8s.io/kubernetes/plugin/pkg/admission/nodedeclaredfeatures"
	"k8s.io/kubernetes/plugin/pkg/admission/noderestriction"
	"k8s.io/kubernetes/plugin/pkg/admission/nodetaint"
	"k8s.io/kubernetes/plugin/pkg/admission/podnodeselector"
	"k8s.io/kubernetes/plugin/pkg/admission/podresize"
	"k8s.io/kubernetes/plugin/pkg/admission/podtolerationrestriction"
	"k8s.io/kubernetes/plugin/pkg/admission/podtopologylabels"
	"k8s.io/kubernetes/plugin/pkg/admission/priority"
	"k8s.io/kubernetes/plugin/pkg/admission/runtimeclass"
	"k8s.io/kubernetes/plugin/pkg/admission/security/podsecurity"
	"k8s.io/kubernetes/plugin/pkg/admission/serviceaccount"
	"k8s.io/kubernetes/plugin/pkg/admission/storage/persistentvolume/resize"
	"k8s.io/kubernetes/plugin/pkg/admission/storage/storageclass/setdefault"
	"k8s.io/kubernetes/plugin/pkg/admission/storage/storageobjectinuseprotection"
)

// builtinPlugins are the admission plugins kapi runs from kube's code, in
// kube-apiserver 1.37's order, that act on the API alone (kapi runs
// NamespaceLifecycle, the policy and webhook plugins and ResourceQuota
// apart). Those a default kube-apiserver enables always run; the optional
// ones when --enable-admission-plugins names them, as kube-apiserver's.
// LimitRanger defaults pods' and containers' resources from their
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
var builtinPlugins = []builtinPlugin{
	{name: antiaffinity.PluginName, register: antiaffinity.Register, optional: pods},
	{name: limitranger.PluginName, register: limitranger.Register},
	{name: serviceaccount.PluginName, register: serviceaccount.Register},
	{name: noderestriction.PluginName, register: noderestriction.Register, optional: nodeRestricted},
	{name: nodetaint.PluginName, register: nodetaint.Register},
	{name: alwayspullimages.PluginName, register: alwayspullimages.Register, optional: pods},
	{name: podsecurity.PluginName, register: podsecurity.Register},
	{name: podnodeselector.PluginName, register: podnodeselector.Register, optional: pods},
	{name: priority.PluginName, register: priority.Register},
	{name: defaulttolerationseconds.PluginName, register: defaulttolerationseconds.Register},
	{name: podtolerationrestriction.PluginName, register: podtolerationrestriction.Register, optional: pods},
	{name: extendedresourcetoleration.PluginName, register: extendedresourcetoleration.Register, optional: pods},
	{name: setdefault.PluginName, register: setdefault.Register},
	{name: storageobjectinuseprotection.PluginName, register: storageobjectinuseprotection.Register},
	{name: resize.PluginName, register: resize.Register},
	{name: runtimeclass.PluginName, register: runtimeclass.Register},
	{name: approval.PluginName, register: approval.Register},
	{name: signing.PluginName, register: signing.Register},
	{name: ctbattest.PluginName, register: ctbattest.Register},
	{name: subjectrestriction.PluginName, register: subjectrestriction.Register},
	{name: defaultingressclass.PluginName, register: defaultingressclass.Register},
	{name: denyserviceexternalips.PluginName, register: denyserviceexternalips.Register, optional: []schema.GroupResource{{Resource: "services"}}},
	{name: podtopologylabels.PluginName, register: podtopologylabels.Register},
	{name: nodedeclaredfeatures.PluginName, register: nodedeclaredfeatures.Register},
	{name: podresize.PluginName, register: podresize.Register},
}

type builtinPlugin struct {
	name     string
	register func(*apiadmission.Plugins)
	// optional, for a plugin a default kube-apiserver does not run, are
	// the resources it looks at beyond builtinResources.
	optional []schema.GroupResource
}

var pods = []schema.GroupResource{{Resource: "pods"}}

// nodeRestricted are what NodeRestriction limits a node's kubelet to its
// own of.
var nodeRestricted = []schema.GroupResource{
	{Resource: "pods"}, {Resource: "nodes"}, {Resource: "persistentvolumeclaims"}, {Resource: "serviceaccounts"},
	{Group: "coordination.k8s.io", Resource: "leases"}, {Group: "storage.k8s.io", Resource: "csinodes"},
	{Group: "resource.k8s.io", Resource: "resourceslices"},
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"},
	{Group: "certificates.k8s.io", Resource: "podcertificaterequests"},
}

// runApart are the plugins of a default kube-apiserver that kapi runs
// outside builtinPlugins, or (PodGroupProtection, for an API kapi does not
// serve) not at all: naming them enables nothing more.
var runApart = map[string]bool{
	"NamespaceLifecycle": true, "MutatingAdmissionPolicy": true, "MutatingAdmissionWebhook": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionWebhook": true, "ResourceQuota": true,
	"PodGroupProtection": true,
}

// notOffered are kube-apiserver's plugins that kapi cannot run: those that
// need a configuration file, and those that stand in for its own.
var notOffered = map[string]bool{
	"AlwaysAdmit": true, "AlwaysDeny": true, "NamespaceAutoProvision": true, "NamespaceExists": true,
	"ImagePolicyWebhook": true, "EventRateLimit": true, "OwnerReferencesPermissionEnforcement": true,
}

// OptionalPlugins are the names --enable-admission-plugins can add.
func OptionalPlugins() []string {
	var names []string
	for _, p := range builtinPlugins {
		if p.optional != nil {
			names = append(names, p.name)
		}
	}
	return names
}

// runningPlugins checks the names --enable-admission-plugins and
// --disable-admission-plugins give, with kube-apiserver's words for one
// they do not know, and returns the set of builtinPlugins to run: those a
// default kube-apiserver runs and those enabled, less those disabled.
func runningPlugins(enable, disable []string) (map[string]bool, error) {
	known := map[string]bool{}
	running := map[string]bool{}
	for _, p := range builtinPlugins {
		known[p.name] = true
		running[p.name] = p.optional == nil
	}
	for name := range runApart {
		running[name] = true
	}
	var overlap []string
	for _, name := range enable {
		if slices.Contains(disable, name) {
			overlap = append(overlap, name)
		}
	}
	if len(overlap) > 0 {
		slices.Sort(overlap)
		return nil, fmt.Errorf("%v in enable-admission-plugins and disable-admission-plugins overlapped", overlap)
	}
	for _, name := range enable {
		switch {
		case notOffered[name]:
			return nil, fmt.Errorf("enable-admission-plugins plugin %q is not offered by kapi (it can add %s)", name, strings.Join(OptionalPlugins(), ", "))
		case !known[name] && !runApart[name]:
			return nil, fmt.Errorf("enable-admission-plugins plugin %q is unknown", name)
		}
		running[name] = known[name]
	}
	for _, name := range disable {
		switch {
		case !known[name] && !runApart[name] && !notOffered[name]:
			return nil, fmt.Errorf("disable-admission-plugins plugin %q is unknown", name)
		}
		running[name] = false
	}
	return running, nil
}

// builtinResources are the resources the default plugins look at: other writes
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
	// running are the plugins to run, and resources what they look at.
	running   map[string]bool
	resources map[schema.GroupResource]bool
	chain     apiadmission.Interface
	started   atomic.Bool
}

// Selection tells which admission plugins run, as kube-apiserver's
// --enable-admission-plugins and --disable-admission-plugins choose them.
type Selection struct{ running map[string]bool }

// Select checks the names the two flags give and returns the plugins that
// run: those a default kube-apiserver runs and those enable names, less
// those disable names.
func Select(enable, disable []string) (Selection, error) {
	running, err := runningPlugins(enable, disable)
	return Selection{running}, err
}

// Runs tells whether the plugin of that name runs.
func (s Selection) Runs(name string) bool { return s.running[name] }

// NewBuiltins makes the chain's holder, with the plugins of builtinPlugins
// that sel runs; Start makes the plugins.
func NewBuiltins(authorizer authorizer.Authorizer, sel Selection) (*Builtins, error) {
	running := sel.running
	resources := maps.Clone(builtinResources)
	for _, p := range builtinPlugins {
		if running[p.name] {
			for _, gr := range p.optional {
				resources[gr] = true
			}
		}
	}
	return &Builtins{authorizer: authorizer, running: running, resources: resources}, nil
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
		if !b.running[p.name] {
			continue
		}
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
	return b.started.Load() && b.resources[a.Resource.GroupResource()] && b.chain.Handles(apiadmission.Operation(a.Operation))
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
