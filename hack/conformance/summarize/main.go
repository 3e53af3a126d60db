// Command summarize writes docs/CONFORMANCE.md from the ginkgo JUnit reports
// of hack/conformance.sh: totals per API content type, every selected test with
// its result per content type, and the categories of tests the run skipped.
//
//	go run ./hack/conformance/summarize -release v1.37.2 -focus RE -skip RE \
//		-categories FILE -out docs/CONFORMANCE.md \
//		-report application/json=junit-json.xml -report application/vnd.kubernetes.protobuf=junit-protobuf.xml
//
// The categories file has one "regex<TAB>reason" a line: the groups SKIP is made of.
// It uses only the standard library.
package main

import (
	"bufio"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

// JUnit as ginkgo v2 writes it.
type junitSuites struct {
	Suites []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name  string      `xml:"name,attr"`
	Cases []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name    string        `xml:"name,attr"`
	Status  string        `xml:"status,attr"`
	Time    float64       `xml:"time,attr"`
	Skipped *junitMessage `xml:"skipped"`
	Failure *junitMessage `xml:"failure"`
	Error   *junitMessage `xml:"error"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

// outcome of one test under one content type.
type outcome int

const (
	notRun      outcome = iota // not in that report
	filtered                   // not selected by focus/skip
	passed                     // ran and passed
	failed                     // failed, timed out, panicked, interrupted or aborted
	skippedLive                // selected, but skipped itself at run time
	didNotRun                  // selected, but never started (the suite timed out or was interrupted)
)

type result struct {
	outcome outcome
	message string // first line of the failure or skip reason
	seconds float64
}

type run struct {
	contentType string
	label       string
	results     map[string]result // by test name
	suiteFails  []string          // failed suite-level nodes (BeforeSuite ...)
	duration    float64
}

type failureGroup struct {
	count   int
	example string
	types   map[string]bool
}

// generated matches what differs between runs in a failure message: numbers,
// hex and random suffixes of generated names.
var generated = regexp.MustCompile(`[0-9]+|-[a-z0-9]{5}\b`)

func normalize(msg string) string {
	return generated.ReplaceAllString(msg, "#")
}

type category struct {
	re     *regexp.Regexp
	source string
	why    string
}

type reportFlag []string

func (r *reportFlag) String() string     { return strings.Join(*r, ",") }
func (r *reportFlag) Set(v string) error { *r = append(*r, v); return nil }

func main() {
	var reports reportFlag
	release := flag.String("release", "", "Kubernetes release of the e2e tests")
	focus := flag.String("focus", "", "ginkgo focus regex of the run")
	focusDoc := flag.String("focus-doc", "", "what the focus selects, in Markdown (default: the regex)")
	skip := flag.String("skip", "", "ginkgo skip regex of the run")
	nodes := flag.String("nodes", "", "ginkgo parallel processes of the run")
	e2eArgs := flag.String("e2e-args", "", "further flags the e2e binary ran with")
	setup := flag.String("setup", "", "';'-separated notes: what the script made up for")
	categoriesFile := flag.String("categories", "", "file of regex<TAB>reason lines: the skipped categories")
	out := flag.String("out", "docs/CONFORMANCE.md", "Markdown file to write")
	date := flag.String("date", time.Now().UTC().Format("2006-01-02"), "date of the run")
	flag.Var(&reports, "report", "CONTENT-TYPE=JUNIT.xml, once per content type, in order")
	flag.Parse()
	if len(reports) == 0 {
		fatalf("no -report given")
	}

	focusRE := mustCompile(*focus)
	skipRE := mustCompile(*skip)
	categories, err := readCategories(*categoriesFile)
	if err != nil {
		fatalf("%v", err)
	}

	var runs []*run
	for _, r := range reports {
		ctype, path, ok := strings.Cut(r, "=")
		if !ok {
			fatalf("-report %q: want CONTENT-TYPE=FILE", r)
		}
		rn, err := readRun(ctype, path)
		if err != nil {
			fatalf("%v", err)
		}
		runs = append(runs, rn)
	}
	// Ginkgo reports a spec it never got to (suite timeout, interrupt) as
	// "skipped", as it does one that focus and skip left out: a spec that
	// focus selects and skip does not is one that did not run.
	for _, rn := range runs {
		for name, res := range rn.results {
			if res.outcome == filtered && (focusRE == nil || focusRE.MatchString(name)) &&
				(skipRE == nil || !skipRE.MatchString(name)) {
				res.outcome = didNotRun
				rn.results[name] = res
			}
		}
	}

	var b strings.Builder
	if *focusDoc == "" {
		*focusDoc = fmt.Sprintf("`%s`", *focus)
	}
	write(&b, runs, *release, *focusDoc, *skip, *nodes, *e2eArgs, *setup, *date, focusRE, skipRE, categories)
	if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "summarize: "+format+"\n", args...)
	os.Exit(1)
}

func mustCompile(re string) *regexp.Regexp {
	if re == "" {
		return nil
	}
	c, err := regexp.Compile(re)
	if err != nil {
		fatalf("regex %q: %v", re, err)
	}
	return c
}

func readCategories(path string) ([]category, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cats []category
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		re, why, _ := strings.Cut(line, "\t")
		c, err := regexp.Compile(re)
		if err != nil {
			return nil, fmt.Errorf("category %q: %v", re, err)
		}
		cats = append(cats, category{re: c, source: re, why: strings.TrimSpace(why)})
	}
	return cats, sc.Err()
}

// labelSuffix is the " [label, label]" ginkgo appends to a JUnit test name.
var labelSuffix = regexp.MustCompile(` \[[^\[\]]*\]$`)

// testName turns a JUnit test name into the spec text: without the leading
// "[It] " and without the trailing list of labels ginkgo appends (the e2e
// framework puts each label in the text too, as "[Label]").
func testName(junitName string) string {
	name := strings.TrimPrefix(junitName, "[It] ")
	if m := labelSuffix.FindString(name); m != "" {
		// Labels are listed comma-separated; a single trailing "[X]" is a label
		// list only if "[X]" also appears earlier in the text.
		inner := strings.TrimSuffix(strings.TrimPrefix(m, " ["), "]")
		rest := strings.TrimSuffix(name, m)
		isLabels := true
		for _, l := range strings.Split(inner, ", ") {
			if !strings.Contains(rest, "["+l+"]") && !strings.HasPrefix(l, "sig-") {
				isLabels = false
			}
		}
		if isLabels {
			name = rest
		}
	}
	return name
}

func readRun(ctype, path string) (*run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var suites junitSuites
	if err := xml.Unmarshal(data, &suites); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	rn := &run{contentType: ctype, label: shortLabel(ctype), results: map[string]result{}}
	for _, s := range suites.Suites {
		for _, c := range s.Cases {
			if !strings.HasPrefix(c.Name, "[It]") {
				// Suite-level nodes: only their failures matter.
				if c.Failure != nil || c.Error != nil {
					rn.suiteFails = append(rn.suiteFails, fmt.Sprintf("%s: %s", c.Name, firstLine(failureText(c))))
				}
				continue
			}
			name := testName(c.Name)
			r := result{seconds: c.Time}
			switch {
			case c.Status == "passed":
				r.outcome = passed
			case c.Failure != nil || c.Error != nil:
				r.outcome = failed
				r.message = firstLine(failureText(c))
				if c.Status != "failed" && c.Status != "" {
					r.message = c.Status + ": " + r.message
				}
			case c.Skipped != nil && (c.Skipped.Message == "skipped" || c.Skipped.Message == "pending"):
				r.outcome = filtered
			case c.Skipped != nil:
				r.outcome = skippedLive
				r.message = firstLine(strings.TrimPrefix(c.Skipped.Message, "skipped - "))
			default:
				r.outcome = failed
				r.message = "status " + c.Status
			}
			if r.outcome != filtered {
				rn.duration += c.Time
			}
			rn.results[name] = r
		}
	}
	return rn, nil
}

func failureText(c junitCase) string {
	for _, m := range []*junitMessage{c.Failure, c.Error} {
		if m == nil {
			continue
		}
		if strings.TrimSpace(m.Message) != "" {
			return m.Message
		}
		return m.Body
	}
	return ""
}

// firstLine is the first non-empty line of s, trimmed and cut to a table
// cell's length. Gomega's first lines say little ("Expected", "... failed to
// satisfy matcher."), so a short first line gets the next lines joined to it,
// up to the same length.
func firstLine(s string) string {
	const short, max = 80, 220
	var out string
	for _, l := range strings.Split(s, "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" {
			continue
		}
		if out == "" {
			out = l
		} else {
			out += " " + l
		}
		if len(out) >= short {
			break
		}
	}
	out = withoutPaths(out)
	if len(out) > max {
		out = out[:max] + "…"
	}
	return out
}

// absolutePath matches a file path of the machine the run was on (a
// kubectl binary, a run's kubeconfig), after a space, '=' or the start.
var absolutePath = regexp.MustCompile(`(^|[ =])/[^ ]*/([^/ ]+)`)

// withoutPaths shortens the file paths in a message to their base names:
// the page names no directory of the machine the suite ran on.
func withoutPaths(s string) string { return absolutePath.ReplaceAllString(s, "$1$2") }

func shortLabel(ctype string) string {
	switch ctype {
	case "application/json":
		return "JSON"
	case "application/vnd.kubernetes.protobuf":
		return "protobuf"
	}
	return ctype
}

// cell escapes text for a Markdown table cell.
func cell(s string) string {
	s = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
	s = strings.ReplaceAll(s, "|", `\|`)
	return s
}

func write(b *strings.Builder, runs []*run, release, focus, skip, nodes, e2eArgs, setup, date string,
	focusRE, skipRE *regexp.Regexp, cats []category) {
	var labels []string
	for _, r := range runs {
		labels = append(labels, fmt.Sprintf("`%s`", r.contentType))
	}

	// Every test name seen in any report.
	all := map[string]bool{}
	for _, r := range runs {
		for name := range r.results {
			all[name] = true
		}
	}
	// Selected: ran (or skipped itself) in at least one run.
	var selected, skippedByUs []string
	for name := range all {
		sel := false
		for _, r := range runs {
			if o := r.results[name].outcome; o != filtered && o != notRun {
				sel = true
			}
		}
		switch {
		case sel:
			selected = append(selected, name)
		case focusRE == nil || focusRE.MatchString(name):
			if skipRE == nil || skipRE.MatchString(name) {
				skippedByUs = append(skippedByUs, name)
			}
		}
	}
	sort.Strings(selected)
	sort.Strings(skippedByUs)

	fmt.Fprintf(b, "# Conformance: upstream e2e tests\n\n")
	fmt.Fprintf(b, "This page is generated by `hack/conformance.sh`; do not edit it by hand.\n\n")
	fmt.Fprintf(b, "On %s, the upstream end-to-end tests of Kubernetes %s (the release kapi emulates), "+
		"built from the `k8s.io/kubernetes/test/e2e` Go module at that version, ran against a fresh kapi "+
		"(`kapi serve --storage=memory --simulated-nodes 2`, one per content type) with ginkgo (%s parallel processes, `--provider=skeleton`), "+
		"once per API content type: %s. Pods run on kapi's two simulated nodes, which run no containers.\n\n",
		date, release, nodes, strings.Join(labels, ", "))
	if setup != "" {
		fmt.Fprintf(b, "Where kapi did not (yet) do what kube-apiserver and kube-controller-manager do, the run made up for it:\n\n")
		for _, n := range strings.Split(setup, ";") {
			if n = strings.TrimSpace(n); n != "" {
				fmt.Fprintf(b, "- %s\n", n)
			}
		}
		fmt.Fprintln(b)
	}
	if e2eArgs != "" {
		fmt.Fprintf(b, "Further e2e flags: `%s`.\n\n", e2eArgs)
	}
	fmt.Fprintf(b, "Focus: %s. Tests that cannot pass without a container runtime (a container must serve: webhook and aggregated API servers), "+
		"are disruptive or flaky, or need optional features are skipped: see [Skipped](#skipped). "+
		"Tests that need a controller kapi does not run yet are not skipped.\n\n", focus)
	fmt.Fprintf(b, "To rerun (it builds the e2e binary once, then reuses it): `hack/conformance.sh`; "+
		"knobs `FOCUS`, `SKIP`, `CONTENT_TYPES`, `NODES` (see the script's header), e.g. "+
		"`CONTENT_TYPES=application/json hack/conformance.sh`.\n\n")

	// Totals.
	fmt.Fprintf(b, "## Totals\n\n")
	fmt.Fprintf(b, "| Content type | Selected | Passed | Failed | Skipped at run time | Not run (suite timeout) | Skipped by us | Test time |\n")
	fmt.Fprintf(b, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range runs {
		var sel, pass, fail, live, notrun, ours int
		for name, res := range r.results {
			switch res.outcome {
			case passed:
				pass++
			case failed:
				fail++
			case skippedLive:
				live++
			case didNotRun:
				notrun++
			case filtered:
				if (focusRE == nil || focusRE.MatchString(name)) && (skipRE == nil || skipRE.MatchString(name)) {
					ours++
				}
			}
		}
		sel = pass + fail + live + notrun
		fmt.Fprintf(b, "| `%s` | %d | %d | %d | %d | %d | %d | %s |\n", r.contentType, sel, pass, fail, live, notrun, ours,
			time.Duration(r.duration*float64(time.Second)).Round(time.Second).String())
	}
	fmt.Fprintln(b)
	for _, r := range runs {
		for _, f := range r.suiteFails {
			fmt.Fprintf(b, "Suite-level failure (`%s`): %s\n\n", r.contentType, cell(f))
		}
	}

	// Every selected test.
	fmt.Fprintf(b, "## Results\n\n")
	fmt.Fprintf(b, "pass, **FAIL**, skip (the test skipped itself at run time), not run (the suite timed out first), "+
		"or — (not in that run). "+
		"For failures and skips: the start of the message (a short first line gets the next ones).\n\n")
	fmt.Fprintf(b, "| # | Test |")
	for _, r := range runs {
		fmt.Fprintf(b, " %s |", r.label)
	}
	fmt.Fprintf(b, " Failure (first lines) |\n| ---: | --- |")
	for range runs {
		fmt.Fprintf(b, " :---: |")
	}
	fmt.Fprintf(b, " --- |\n")
	for i, name := range selected {
		fmt.Fprintf(b, "| %d | %s |", i+1, cell(name))
		var msgs []string
		seen := map[string]bool{}
		for _, r := range runs {
			res := r.results[name]
			switch res.outcome {
			case passed:
				fmt.Fprintf(b, " pass |")
			case failed:
				fmt.Fprintf(b, " **FAIL** |")
			case skippedLive:
				fmt.Fprintf(b, " skip |")
			case didNotRun:
				fmt.Fprintf(b, " not run |")
			default:
				fmt.Fprintf(b, " — |")
			}
			if res.message != "" && !seen[res.message] {
				seen[res.message] = true
				msgs = append(msgs, res.message)
			}
		}
		var parts []string
		for _, m := range msgs {
			parts = append(parts, "`"+strings.ReplaceAll(strings.ReplaceAll(m, "`", "'"), "|", `\|`)+"`")
		}
		fmt.Fprintf(b, " %s |\n", strings.Join(parts, "<br>"))
	}
	fmt.Fprintln(b)

	// Failures grouped by message, to see what to fix first.
	groups := map[string]*failureGroup{}
	for _, name := range selected {
		for _, r := range runs {
			res := r.results[name]
			if res.outcome != failed {
				continue
			}
			key := normalize(res.message)
			g := groups[key]
			if g == nil {
				g = &failureGroup{example: res.message, types: map[string]bool{}}
				groups[key] = g
			}
			g.count++
			g.types[r.label] = true
		}
	}
	if len(groups) > 0 {
		var list []*failureGroup
		for _, g := range groups {
			list = append(list, g)
		}
		sort.Slice(list, func(i, j int) bool {
			if list[i].count != list[j].count {
				return list[i].count > list[j].count
			}
			return list[i].example < list[j].example
		})
		fmt.Fprintf(b, "## Failures by message\n\n")
		fmt.Fprintf(b, "Failures (test × content type) grouped by their first line, numbers and generated names left out; most frequent first.\n\n")
		fmt.Fprintf(b, "| Failures | Content types | Message (one example) |\n| ---: | --- | --- |\n")
		for _, g := range list {
			var types []string
			for _, r := range runs {
				if g.types[r.label] {
					types = append(types, r.label)
				}
			}
			fmt.Fprintf(b, "| %d | %s | `%s` |\n", g.count, strings.Join(types, ", "),
				strings.ReplaceAll(strings.ReplaceAll(g.example, "`", "'"), "|", `\|`))
		}
		fmt.Fprintln(b)
	}

	// Skipped categories.
	fmt.Fprintf(b, "## Skipped\n\n")
	fmt.Fprintf(b, "%d tests match the focus but are left out by the skip expression, "+
		"which is the alternation of the categories below (each test is counted under the first category that matches it):\n\n",
		len(skippedByUs))
	byCat := make([][]string, len(cats)+1)
	for _, name := range skippedByUs {
		i := len(cats)
		for j, c := range cats {
			if c.re.MatchString(name) {
				i = j
				break
			}
		}
		byCat[i] = append(byCat[i], name)
	}
	fmt.Fprintf(b, "| Category (regex) | Why | Tests |\n| --- | --- | ---: |\n")
	for i, c := range cats {
		fmt.Fprintf(b, "| `%s` | %s | %d |\n", strings.ReplaceAll(c.source, "|", `\|`), cell(c.why), len(byCat[i]))
	}
	if n := len(byCat[len(cats)]); n > 0 {
		fmt.Fprintf(b, "| (other) | matched by SKIP but no category | %d |\n", n)
	}
	fmt.Fprintln(b)
	for i := range byCat {
		if len(byCat[i]) == 0 {
			continue
		}
		title := "(other)"
		if i < len(cats) {
			title = cats[i].why
		}
		fmt.Fprintf(b, "<details><summary>%s (%d)</summary>\n\n", cell(title), len(byCat[i]))
		for _, name := range byCat[i] {
			fmt.Fprintf(b, "- %s\n", cell(name))
		}
		fmt.Fprintf(b, "\n</details>\n\n")
	}
	fmt.Fprintf(b, "The skip expression in full:\n\n```\n%s\n```\n", skip)
}
