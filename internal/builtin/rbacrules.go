package builtin

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kapi-dev/kapi/internal/cache"
	"github.com/kapi-dev/kapi/internal/pipeline"
)

// storedRBAC reads the roles and bindings that decide what a user holds,
// for the checks that keep a user from granting more: the newest ones, as
// kube-apiserver's RBAC storage reads them from storage. (The authorizer
// reads informers, which may not hold a role granted a moment ago.)
type storedRBAC struct{ p *pipeline.Pipeline }

var (
	rolesGVR               = rbacv1.SchemeGroupVersion.WithResource("roles")
	roleBindingsGVR        = rbacv1.SchemeGroupVersion.WithResource("rolebindings")
	clusterRolesGVR        = rbacv1.SchemeGroupVersion.WithResource("clusterroles")
	clusterRoleBindingsGVR = rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings")
)

func (r storedRBAC) GetRole(ctx context.Context, namespace, name string) (*rbacv1.Role, error) {
	obj, err := r.get(ctx, rolesGVR, namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*rbacv1.Role), nil
}

func (r storedRBAC) GetClusterRole(ctx context.Context, name string) (*rbacv1.ClusterRole, error) {
	obj, err := r.get(ctx, clusterRolesGVR, "", name)
	if err != nil {
		return nil, err
	}
	return obj.(*rbacv1.ClusterRole), nil
}

func (r storedRBAC) ListRoleBindings(ctx context.Context, namespace string) ([]*rbacv1.RoleBinding, error) {
	return listOf[*rbacv1.RoleBinding](r.list(ctx, roleBindingsGVR, namespace))
}

func (r storedRBAC) ListClusterRoleBindings(ctx context.Context) ([]*rbacv1.ClusterRoleBinding, error) {
	return listOf[*rbacv1.ClusterRoleBinding](r.list(ctx, clusterRoleBindingsGVR, ""))
}

// get reads one object. Not found, it is refused in the words of
// kube-apiserver's storage, which names the resource of the request being
// checked ("rolebindings... not found" for a binding to a missing role);
// a Role without a namespace (a ClusterRoleBinding's roleRef of kind
// Role) is its storage's 400.
func (r storedRBAC) get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	store := r.p.Registry().Snapshot().Lookup(gvr)
	if store.Info.Namespaced && namespace == "" {
		return nil, apierrors.NewBadRequest("Namespace parameter required.")
	}
	obj, err := store.Get(ctx, namespace, name)
	if apierrors.IsNotFound(err) {
		resource := gvr.GroupResource()
		if info, ok := genericapirequest.RequestInfoFrom(ctx); ok && info.IsResourceRequest {
			resource = schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}
		}
		return nil, apierrors.NewNotFound(resource, name)
	}
	return obj, err
}

// list reads the newest objects of a namespace from the watch cache, once
// it holds the current revision.
func (r storedRBAC) list(ctx context.Context, gvr schema.GroupVersionResource, namespace string) ([]runtime.Object, error) {
	store := r.p.Registry().Snapshot().Lookup(gvr)
	found, err := store.Backend().Cache.List(ctx, cache.ListRequest{
		Consistency: cache.Consistent, Filter: cache.Filter{Prefix: store.CollectionPrefix(namespace)},
	})
	if err != nil {
		return nil, err
	}
	return found.Items, nil
}

// listOf types the items of a list; the watch cache's objects are shared
// and only read.
func listOf[T runtime.Object](items []runtime.Object, err error) ([]T, error) {
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(items))
	for _, item := range items {
		out = append(out, item.(T))
	}
	return out, nil
}
