package builtin

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	clusterrolepolicy "k8s.io/kubernetes/pkg/registry/rbac/clusterrole/policybased"
	clusterrolebindingpolicy "k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding/policybased"
	rolepolicy "k8s.io/kubernetes/pkg/registry/rbac/role/policybased"
	rolebindingpolicy "k8s.io/kubernetes/pkg/registry/rbac/rolebinding/policybased"
	rbacregistryvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"

	"github.com/kapi-dev/kapi/internal/authz"
	"github.com/kapi-dev/kapi/internal/pipeline"
	"github.com/kapi-dev/kapi/internal/registry"
)

// rbacHooks refuse Roles, ClusterRoles and bindings that would give more
// than their author holds, unless the author may escalate or bind: the
// checks of kube-apiserver's own RBAC storage, which wraps the generic
// storage of those four resources. Here the wrapped storage only hands
// back what it is given, so that kube's wrapper runs its checks on every
// create and update and the write pipeline does the rest.
func rbacHooks(p *pipeline.Pipeline, a *authz.Authorizer) map[schema.GroupResource]registry.Hooks {
	if !a.RBAC {
		return nil // everyone may escalate (AlwaysAllow)
	}
	rules := rbacregistryvalidation.NewDefaultRuleResolver(storedRBAC{p}, storedRBAC{p}, storedRBAC{p}, storedRBAC{p})
	gr := func(r string) schema.GroupResource {
		return schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: r}
	}
	return map[schema.GroupResource]registry.Hooks{
		gr("roles"): escalationChecks(func(s rest.StandardStorage) checkedStorage {
			return rolepolicy.NewStorage(s, a, rules)
		}),
		gr("clusterroles"): escalationChecks(func(s rest.StandardStorage) checkedStorage {
			return clusterrolepolicy.NewStorage(s, a, rules)
		}),
		gr("rolebindings"): escalationChecks(func(s rest.StandardStorage) checkedStorage {
			return rolebindingpolicy.NewStorage(s, a, rules)
		}),
		gr("clusterrolebindings"): escalationChecks(func(s rest.StandardStorage) checkedStorage {
			return clusterrolebindingpolicy.NewStorage(s, a, rules)
		}),
	}
}

// checkedStorage is kube's RBAC storage wrapper, as far as the checks go.
type checkedStorage interface {
	rest.Creater
	rest.Updater
}

// escalationChecks runs a wrapper's checks on the internal form of an
// object before it is stored.
func escalationChecks(wrap func(rest.StandardStorage) checkedStorage) registry.Hooks {
	return registry.Hooks{
		BeforeCreate: func(ctx context.Context, obj runtime.Object, _ bool) (func(), error) {
			internal, err := toInternal(obj)
			if err != nil {
				return nil, err
			}
			_, err = wrap(passThrough{}).Create(withNamespace(ctx, obj), internal, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
			if err != nil {
				return nil, err
			}
			return func() {}, nil
		},
		CheckUpdated: func(ctx context.Context, next, current runtime.Object) error {
			internalNext, err := toInternal(next)
			if err != nil {
				return err
			}
			internalCurrent, err := toInternal(current)
			if err != nil {
				return err
			}
			_, _, err = wrap(passThrough{current: internalCurrent}).Update(withNamespace(ctx, next), mustAccessor(next).GetName(),
				rest.DefaultUpdatedObjectInfo(internalNext), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc,
				false, &metav1.UpdateOptions{})
			return err
		},
	}
}

// passThrough stands for the storage kube's wrapper wraps: a create or an
// update only hands back the object it would store (an update computes it
// from current, which runs the wrapper's checks). Nothing else is called.
type passThrough struct {
	rest.StandardStorage
	current runtime.Object
}

func (passThrough) Create(_ context.Context, obj runtime.Object, _ rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	return obj, nil
}

func (p passThrough) Update(ctx context.Context, _ string, objInfo rest.UpdatedObjectInfo, _ rest.ValidateObjectFunc,
	_ rest.ValidateObjectUpdateFunc, _ bool, _ *metav1.UpdateOptions) (runtime.Object, bool, error) {
	obj, err := objInfo.UpdatedObject(ctx, p.current)
	return obj, false, err
}

// withNamespace puts an object's namespace in ctx, where kube's wrapper
// reads it.
func withNamespace(ctx context.Context, obj runtime.Object) context.Context {
	return genericapirequest.WithNamespace(ctx, mustAccessor(obj).GetNamespace())
}
