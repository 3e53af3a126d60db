// Package crd serves custom resources as kube-apiserver's apiextensions
// server does: it follows the CustomResourceDefinitions through the API,
// runs apiextensions' own controllers (names, establishing, non-structural
// schemas, API approval, the cleanup finalizer), and puts a registry
// backend for each CRD whose names are accepted, with the CRD's schemas,
// apiextensions' strategy of custom resources and its sub-resources.
package crd

import (
	"context"
	"log/slog"
	"reflect"
	"sync"
	"time"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	crdclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	crdinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions"
	"k8s.io/apiextensions-apiserver/pkg/controller/apiapproval"
	"k8s.io/apiextensions-apiserver/pkg/controller/establish"
	"k8s.io/apiextensions-apiserver/pkg/controller/finalizer"
	"k8s.io/apiextensions-apiserver/pkg/controller/nonstructuralschema"
	"k8s.io/apiextensions-apiserver/pkg/controller/status"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
	"github.com/kapi-dev/kapi/internal/webhook"
)

// Config is what serving custom resources needs.
type Config struct {
	// Client reaches kapi itself with the identity of kube-apiserver's
	// loopback client.
	Client   *rest.Config
	Registry *registry.Registry
	// Writes is the write pipeline, which the CRD finalizer deletes
	// custom resources through.
	Writes *pipeline.Pipeline
	Logger *slog.Logger
}

// workers per apiextensions controller, as kube-apiserver runs them.
const workers = 5

// Run starts following CRDs and returns once the CRDs that exist are
// served; the controllers run until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	client, err := crdclient.NewForConfig(cfg.Client)
	if err != nil {
		return err
	}
	// apiextensions-apiserver's CRD informers resync every 5 minutes.
	factory := crdinformers.NewSharedInformerFactory(client, 5*time.Minute)
	crds := factory.Apiextensions().V1().CustomResourceDefinitions()
	crdsV1 := client.ApiextensionsV1()

	kube, err := kubernetes.NewForConfig(cfg.Client)
	if err != nil {
		return err
	}
	conversions, err := conversion.NewCRConverterFactory(webhook.ServiceResolver{Client: kube}, nil)
	if err != nil {
		return err
	}
	establishing := establish.NewEstablishingController(crds, crdsV1)
	s := &server{cfg: cfg, establishing: establishing, conversions: conversions, served: map[string]served{}}
	if _, err := crds.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { s.sync(obj.(*apiextensionsv1.CustomResourceDefinition)) },
		UpdateFunc: func(_, obj interface{}) { s.sync(obj.(*apiextensionsv1.CustomResourceDefinition)) },
		DeleteFunc: s.remove,
	}); err != nil {
		return err
	}
	naming := status.NewNamingConditionController(klog.FromContext(ctx), crds, crdsV1)
	nonStructural := nonstructuralschema.NewConditionController(crds, crdsV1)
	approval := apiapproval.NewKubernetesAPIApprovalPolicyConformantConditionController(crds, crdsV1)
	cleanup := finalizer.NewCRDFinalizer(crds, crdsV1, storedCustomResources{cfg.Registry, cfg.Writes})

	factory.StartWithContext(ctx)
	factory.WaitForCacheSync(ctx.Done())
	go naming.RunWithContext(ctx)
	go establishing.RunWithContext(ctx)
	go nonStructural.RunWithContext(workers, ctx)
	go approval.RunWithContext(workers, ctx)
	go cleanup.RunWithContext(workers, ctx)
	return ctx.Err()
}

// server keeps the registry's backends of custom resources equal to the
// CRDs.
type server struct {
	cfg          Config
	establishing *establish.EstablishingController
	conversions  *conversion.CRConverterFactory
	mu           sync.Mutex
	served       map[string]served // by CRD name
}

// served is what a backend was made from: a CRD change that leaves it
// alone (a status condition) keeps the backend and its watchers.
type served struct {
	resource schema.GroupResource
	spec     *apiextensionsv1.CustomResourceDefinitionSpec
	names    apiextensionsv1.CustomResourceDefinitionNames
	ending   bool // terminating
	hidden   bool // not established yet: served, but not in discovery
}

// sameObjects tells whether want serves the objects have does, read the
// same way: the same resource, spec and names.
func (have served) sameObjects(want served) bool {
	return have.resource == want.resource && reflect.DeepEqual(have.spec, want.spec) && reflect.DeepEqual(have.names, want.names)
}

// sync serves crd's resources once its names are accepted (or it is
// established), as kube-apiserver's custom resource handler does, and
// asks for it to be established once its names are accepted. Until it is
// established they are left out of discovery and the OpenAPI documents,
// as kube-apiserver's discovery and OpenAPI controllers leave them out:
// a client that waits for a CRD's resources to be discovered then finds
// it established (the upstream e2e tests update a CRD as soon as
// discovery lists it, and the establishing controller's update would
// conflict with theirs).
func (s *server) sync(crd *apiextensionsv1.CustomResourceDefinition) {
	namesAccepted := apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.NamesAccepted)
	established := apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established)
	if namesAccepted && !established {
		s.establishing.QueueCRD(crd.Name, 0)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !namesAccepted && !established {
		s.removeLocked(crd.Name)
		return
	}
	want := served{
		resource: schema.GroupResource{Group: crd.Spec.Group, Resource: crd.Status.AcceptedNames.Plural},
		spec:     &crd.Spec, names: crd.Status.AcceptedNames,
		ending: !crd.DeletionTimestamp.IsZero() || apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Terminating),
		hidden: !established,
	}
	if have, ok := s.served[crd.Name]; ok && have.sameObjects(want) && have.ending == want.ending {
		if have.hidden != want.hidden {
			s.cfg.Registry.SetHidden(want.resource, want.hidden)
			s.served[crd.Name] = want
		}
		return
	}
	spec, err := backendSpec(crd, want.ending, s.conversions, s.cfg.Logger)
	if err != nil {
		s.cfg.Logger.Error("serving a custom resource failed", "crd", crd.Name, "err", err)
		s.removeLocked(crd.Name)
		return
	}
	spec.Hidden = want.hidden
	// A CRD that starts terminating keeps serving the same objects: its
	// watchers stay to see them deleted.
	if have, ok := s.served[crd.Name]; ok && have.sameObjects(want) && !have.ending && want.ending {
		spec.KeepCache = true
	}
	if have, ok := s.served[crd.Name]; ok && have.resource != want.resource {
		s.cfg.Registry.Remove(have.resource)
	}
	if err := s.cfg.Registry.Put(spec); err != nil {
		s.cfg.Logger.Error("serving a custom resource failed", "crd", crd.Name, "err", err)
		return
	}
	s.served[crd.Name] = want
}

// remove stops serving a deleted CRD's resources.
func (s *server) remove(obj interface{}) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeLocked(crd.Name)
}

func (s *server) removeLocked(name string) {
	if have, ok := s.served[name]; ok {
		s.cfg.Registry.Remove(have.resource)
		delete(s.served, name)
	}
}
