package controllers

import (
	"context"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/controller/clusterroleaggregation"
)

// clusterRoleAggregationWorkers is what kube-controller-manager runs the
// controller with (there is no flag for it).
const clusterRoleAggregationWorkers = 5

// runClusterRoleAggregation starts kube-controller-manager's controller
// that fills the rules of aggregated ClusterRoles (admin, edit, view and
// any with an aggregationRule) from the ClusterRoles their selectors pick.
func runClusterRoleAggregation(ctx context.Context, start func(func()), client kubernetes.Interface, factory informers.SharedInformerFactory) {
	c := clusterroleaggregation.NewClusterRoleAggregation(factory.Rbac().V1().ClusterRoles(), client.RbacV1())
	start(func() { c.Run(ctx, clusterRoleAggregationWorkers) })
}
