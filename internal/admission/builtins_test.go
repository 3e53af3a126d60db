package admission

import (
	"strings"
	"testing"
)

// TestRunningPlugins: the plugins kube-apiserver runs by default run, an
// enabled optional one joins them, a disabled one leaves, and names kapi
// cannot act on are refused with kube-apiserver's words.
func TestRunningPlugins(t *testing.T) {
	running, err := runningPlugins([]string{"AlwaysPullImages"}, []string{"ServiceAccount"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"AlwaysPullImages": true, "LimitRanger": true, "ServiceAccount": false, "PodNodeSelector": false} {
		if running[name] != want {
			t.Errorf("%s running: %v, want %v", name, running[name], want)
		}
	}
	for _, tc := range []struct {
		enable, disable []string
		want            string
	}{
		{disable: []string{"NoSuchPlugin"}, want: `disable-admission-plugins plugin "NoSuchPlugin" is unknown`},
		{enable: []string{"NoSuchPlugin"}, want: `enable-admission-plugins plugin "NoSuchPlugin" is unknown`},
		{enable: []string{"AlwaysPullImages"}, disable: []string{"AlwaysPullImages"}, want: "[AlwaysPullImages] in enable-admission-plugins and disable-admission-plugins overlapped"},
	} {
		if _, err := runningPlugins(tc.enable, tc.disable); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("enable %v, disable %v: %v; want %q", tc.enable, tc.disable, err, tc.want)
		}
	}
	// The plugins kapi runs apart from kube's chain can be disabled too
	// (kubectl's own tests disable the webhooks, envtest suites often
	// NamespaceLifecycle).
	sel, err := Select(nil, []string{"MutatingAdmissionWebhook", "ValidatingAdmissionWebhook", "ResourceQuota", "NamespaceLifecycle"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"MutatingAdmissionWebhook": false, "ValidatingAdmissionWebhook": false, "ResourceQuota": false,
		"NamespaceLifecycle": false, "ValidatingAdmissionPolicy": true, "MutatingAdmissionPolicy": true, "LimitRanger": true} {
		if sel.Runs(name) != want {
			t.Errorf("%s runs: %v, want %v", name, sel.Runs(name), want)
		}
	}
	// A plugin kapi does not offer, disabled, is what kapi does already.
	if _, err := runningPlugins(nil, []string{"AlwaysAdmit"}); err != nil {
		t.Errorf("disabling a plugin kapi never runs: %v", err)
	}
}
