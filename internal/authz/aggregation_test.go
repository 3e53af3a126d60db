package authz

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/component-helpers/auth/rbac/validation"
)

func TestAggregatedPolicyRoles(t *testing.T) {
	roles := map[string]*rbacv1.ClusterRole{}
	list := policyClusterRoles()
	for i := range list {
		roles[list[i].Name] = &list[i]
	}
	getPods := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}
	createPods := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}}
	for _, c := range []struct {
		role   string
		rule   rbacv1.PolicyRule
		covers bool
	}{
		{"view", getPods, true},
		{"view", createPods, false},
		{"edit", createPods, true},
		{"admin", createPods, true},
	} {
		if covers, _ := validation.Covers(roles[c.role].Rules, []rbacv1.PolicyRule{c.rule}); covers != c.covers {
			t.Errorf("%s grants %v: %t, want %t", c.role, c.rule, covers, c.covers)
		}
	}
	// Aggregation goes through aggregated roles: view into edit into admin.
	for _, pair := range [][2]string{{"edit", "view"}, {"admin", "edit"}} {
		if covers, missing := validation.Covers(roles[pair[0]].Rules, roles[pair[1]].Rules); !covers {
			t.Errorf("%s lacks %v of %s", pair[0], missing, pair[1])
		}
	}
	// What the clusterrole-aggregation controller would compute from them
	// is what they hold: it writes nothing.
	byName := sortedByName(list)
	for _, role := range list {
		if role.AggregationRule == nil {
			continue
		}
		if again := aggregatedRules(&role, byName); !equality.Semantic.DeepEqual(again, role.Rules) {
			t.Errorf("%s: aggregating again gives %d rules, it holds %d", role.Name, len(again), len(role.Rules))
		}
	}
}
