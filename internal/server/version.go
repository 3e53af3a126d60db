package server

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/version"
)

// fallbackAPIVersion is used when the binary carries no module information
// (go run of a single file); keep it equal to go.mod's k8s.io/api version.
const fallbackAPIVersion = "v0.37.2"

// Version reports the Kubernetes release kapi emulates: the one matching
// the k8s.io/api module it was built with (v0.X.Y serves v1.X.Y).
func Version() version.Info {
	api := fallbackAPIVersion
	// The commit and build time are kapi's own, from the version control
	// information Go records in a build of a checkout, as kube-apiserver
	// reports its own.
	commit, treeState, built := "", "clean", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == "k8s.io/api" {
				api = dep.Version
			}
		}
		for _, setting := range bi.Settings {
			switch setting.Key {
			case "vcs.revision":
				commit = setting.Value
			case "vcs.time":
				built = setting.Value
			case "vcs.modified":
				if setting.Value == "true" {
					treeState = "dirty"
				}
			}
		}
	}
	var minor, patch string
	parts := strings.SplitN(strings.TrimPrefix(api, "v0."), ".", 2)
	minor = parts[0]
	if len(parts) > 1 {
		patch = parts[1]
	}
	// kube-apiserver also reports the version it emulates (its own) and
	// the oldest it stays compatible with (the minor before).
	previous := ""
	if n, err := strconv.Atoi(minor); err == nil && n > 0 {
		previous = strconv.Itoa(n - 1)
	}
	return version.Info{
		Major:                 "1",
		Minor:                 minor,
		EmulationMajor:        "1",
		EmulationMinor:        minor,
		MinCompatibilityMajor: "1",
		MinCompatibilityMinor: previous,
		GitVersion:            fmt.Sprintf("v1.%s.%s", minor, patch),
		GitCommit:             commit,
		GitTreeState:          treeState,
		BuildDate:             built,
		GoVersion:             runtime.Version(),
		Compiler:              runtime.Compiler,
		Platform:              runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// ValidGitVersion checks a version to report in place of the release's, as
// kube-apiserver checks its --version=v1.X.Y-suffix: a semantic version
// with the release's major, minor and patch numbers.
func ValidGitVersion(s string) error {
	release := Version().GitVersion
	if s == release {
		return nil
	}
	v, err := utilversion.ParseSemantic(s)
	if err != nil {
		return err
	}
	r, err := utilversion.ParseSemantic(release)
	if err != nil {
		return err
	}
	if v.Major() != r.Major() || v.Minor() != r.Minor() || v.Patch() != r.Patch() {
		return fmt.Errorf("version %q must match major/minor/patch of default version %q", s, release)
	}
	return nil
}
