package handlers

import (
	"strings"
	"testing"
)

// TestAgentManager: the manager name made of a user agent is
// kube-apiserver's: the product before "/", its unprintable characters
// left out, cut at a character boundary within 128 bytes; a name that
// would not validate never comes of a user agent.
func TestAgentManager(t *testing.T) {
	a127 := strings.Repeat("a", 127)
	for agent, want := range map[string]string{
		"kubectl/v1.37.2 (linux/amd64)": "kubectl",
		"a\u00a0b":                      "ab",
		"a\u200bb":                      "ab",
		"\ufeffabc":                     "abc",
		"\tabc":                         "abc",
		a127 + "é":                      a127,
		strings.Repeat("€", 43):         strings.Repeat("€", 42),
		a127 + "\xff":                   a127,
		strings.Repeat("x", 300):        strings.Repeat("x", 128),
		"/leading":                      "",
		"":                              "",
	} {
		if got := agentManager(agent); got != want {
			t.Errorf("agentManager(%q) = %q, want %q", agent, got, want)
		}
	}
}
