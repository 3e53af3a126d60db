package server

import (
	"strings"
	"testing"

	"k8s.io/client-go/discovery"
)

// TestGitVersionReplacesTheReleases: a server given a version (as
// kube-apiserver's --version=v1.X.Y-suffix gives one) reports it at
// /version, with the release's other fields.
func TestGitVersionReplacesTheReleases(t *testing.T) {
	custom := Version().GitVersion + "-custom"
	s := startServerWith(t, Config{GitVersion: custom})
	got, err := discovery.NewDiscoveryClientForConfigOrDie(restConfig(t, s.Kubeconfig)).ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if got.GitVersion != custom || got.Minor != Version().Minor {
		t.Errorf("/version: %+v; want gitVersion %s, minor %s", got, custom, Version().Minor)
	}
}

// TestValidGitVersion: a version to report keeps the release's major,
// minor and patch numbers, as kube-apiserver's --version checks it.
func TestValidGitVersion(t *testing.T) {
	release := Version().GitVersion
	for version, want := range map[string]string{
		release:               "",
		release + "-custom":   "",
		release + "+build.7":  "",
		"v1.0.0":              "must match major/minor/patch of default version",
		"v" + release + "x.y": "could not parse",
	} {
		err := ValidGitVersion(version)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %v; want %q", version, err, want)
		}
	}
}
