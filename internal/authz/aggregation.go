package authz

import (
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
)

// policyClusterRoles are the cluster roles of the bootstrap policy, the
// aggregated ones (admin, edit, view and the like) with the rules
// kube-controller-manager's clusterrole-aggregation controller gives them
// from the policy's other roles.
//
// kube-apiserver creates an aggregated role without rules and leaves them
// to that controller. kapi's controllers start once the server is ready,
// so for the first tens of milliseconds of a new server a binding to view
// granted nothing, a window its users (tests that start a server and use
// it at once) hit. The rules are the ones the controller computes, so it
// finds nothing to change; it still adds the rules of roles created later
// (a CRD's aggregate-to-view role, say).
func policyClusterRoles() []rbacv1.ClusterRole {
	roles := append(bootstrappolicy.ClusterRoles(), bootstrappolicy.ControllerRoles()...)
	aggregateRules(roles)
	return roles
}

// aggregateRules gives each role with an aggregation rule the rules of the
// other roles its selectors match, as the controller does (the matching
// roles by name, each rule once), until no role changes: an aggregated
// role can itself be aggregated (edit into admin).
func aggregateRules(roles []rbacv1.ClusterRole) {
	byName := sortedByName(roles)
	for changed := true; changed; {
		changed = false
		for _, role := range byName {
			if role.AggregationRule == nil {
				continue
			}
			if rules := aggregatedRules(role, byName); !equality.Semantic.DeepEqual(rules, role.Rules) {
				role.Rules, changed = rules, true
			}
		}
	}
}

// sortedByName points to roles in the order of their names, the order the
// controller reads the roles a selector matches in.
func sortedByName(roles []rbacv1.ClusterRole) []*rbacv1.ClusterRole {
	byName := make([]*rbacv1.ClusterRole, len(roles))
	for i := range roles {
		byName[i] = &roles[i]
	}
	slices.SortFunc(byName, func(a, b *rbacv1.ClusterRole) int { return strings.Compare(a.Name, b.Name) })
	return byName
}

// aggregatedRules are the rules of the roles role's selectors match.
func aggregatedRules(role *rbacv1.ClusterRole, byName []*rbacv1.ClusterRole) []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	for i := range role.AggregationRule.ClusterRoleSelectors {
		selector, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			continue // the controller gives up on such a role; the policy has none
		}
		for _, other := range byName {
			if other.Name == role.Name || !selector.Matches(labels.Set(other.Labels)) {
				continue
			}
			for _, rule := range other.Rules {
				if !slices.ContainsFunc(rules, func(have rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(have, rule) }) {
					rules = append(rules, rule)
				}
			}
		}
	}
	return rules
}
