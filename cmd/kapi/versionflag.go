package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/internal/server"
)

// versionFlag is kube-apiserver's --version: alone (or =true) it prints
// "Kubernetes v1.X.Y" and exits, =raw prints the whole version the same
// way, and =v1.X.Y-suffix makes the server report that version in place of
// the release's (kubectl's own tests start kube-apiserver so).
type versionFlag struct{ value string }

func (v *versionFlag) IsBoolFlag() bool { return true }

func (v *versionFlag) String() string {
	if v == nil || v.value == "" {
		return "false"
	}
	return v.value
}

func (v *versionFlag) Set(s string) error {
	switch {
	case s == "raw":
	case strings.HasPrefix(s, "v"):
		if err := server.ValidGitVersion(s); err != nil {
			return err
		}
	default:
		on, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		s = strconv.FormatBool(on)
	}
	v.value = s
	return nil
}

// printAndExitIfAsked prints the version as kube-apiserver does and exits,
// when the flag asks for that.
func (v *versionFlag) printAndExitIfAsked() {
	switch v.value {
	case "true":
		fmt.Printf("Kubernetes %s\n", server.Version().GitVersion)
	case "raw":
		fmt.Printf("%#v\n", server.Version())
	default:
		return
	}
	os.Exit(0)
}

// gitVersion is the version the server is to report in place of the
// release's, if any.
func (v *versionFlag) gitVersion() string {
	if strings.HasPrefix(v.value, "v") {
		return v.value
	}
	return ""
}
