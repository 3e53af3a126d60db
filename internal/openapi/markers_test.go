package openapi

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"iter"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestRequiredMatchesMarkers checks the required fields of every definition
// against kube's rule, read from the source of the API packages: a field is
// required unless marked +optional or, without +required, tagged omitempty.
func TestRequiredMatchesMarkers(t *testing.T) {
	types := builtin().types
	structs := map[string]*ast.StructType{} // "pkgpath.Type"
	for pkgPath, files := range apiSources(t) {
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				if ts, ok := n.(*ast.TypeSpec); ok {
					if st, ok := ts.Type.(*ast.StructType); ok {
						structs[pkgPath+"."+ts.Name.Name] = st
					}
				}
				return true
			})
		}
	}
	defs := Definitions()
	checked := 0
	for name, typ := range types {
		st := structs[typ.PkgPath()+"."+typ.Name()]
		if st == nil || typ.Kind() != reflect.Struct {
			continue
		}
		want := map[string]bool{}
		for _, field := range st.Fields.List {
			if field.Tag == nil || len(field.Names) == 0 {
				continue
			}
			tag := reflect.StructTag(strings.Trim(field.Tag.Value, "`")).Get("json")
			jsonName, opts, _ := strings.Cut(tag, ",")
			if jsonName == "" || jsonName == "-" {
				continue
			}
			var optionalMarker, requiredMarker bool
			if field.Doc != nil {
				for _, c := range field.Doc.List {
					text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
					optionalMarker = optionalMarker || text == "+optional" || strings.HasPrefix(text, "+optional=")
					requiredMarker = requiredMarker || text == "+required" || strings.HasPrefix(text, "+required=")
				}
			}
			optional := strings.Contains(","+opts+",", ",omitempty,")
			if requiredMarker {
				optional = false
			}
			if optionalMarker {
				optional = true
			}
			want[jsonName] = !optional
		}
		got := map[string]bool{}
		for _, r := range defs[name].Required {
			got[r] = true
		}
		for field, required := range want {
			if _, ok := defs[name].Properties[field]; !ok {
				continue
			}
			checked++
			if got[field] != required {
				t.Errorf("%s.%s: required %v, kube's markers say %v", name, field, got[field], required)
			}
		}
	}
	if checked < 1000 {
		t.Errorf("checked only %d fields", checked)
	}
}

// apiSources parses the (non-test) sources of the packages of the Go types
// of the definitions, keyed by package path.
func apiSources(t *testing.T) map[string][]*ast.File {
	t.Helper()
	pkgs := map[string]bool{}
	for _, typ := range builtin().types {
		pkgs[typ.PkgPath()] = true
	}
	var paths []string
	for p := range pkgs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	out, err := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}} {{.Dir}}"}, paths...)...).Output()
	if err != nil {
		t.Skipf("cannot locate the API sources: %v", err)
	}
	sources := map[string][]*ast.File{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkgPath, dir, _ := strings.Cut(line, " ")
		parsed, err := parser.ParseDir(token.NewFileSet(), dir, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range parsed {
			for _, name := range sortedKeys(pkg.Files) {
				sources[pkgPath] = append(sources[pkgPath], pkg.Files[name])
			}
		}
	}
	return sources
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// stringConsts are a package's string constants given as literals or as
// conversions of literals, by name.
func stringConsts(files []*ast.File) map[string]string {
	consts := map[string]string{}
	for _, spec := range declSpecs(files, token.CONST) {
		vs := spec.(*ast.ValueSpec)
		for i, name := range vs.Names {
			if i >= len(vs.Values) {
				continue
			}
			value := vs.Values[i]
			if call, ok := value.(*ast.CallExpr); ok && len(call.Args) == 1 {
				value = call.Args[0]
			}
			if lit, ok := value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				consts[name.Name], _ = strconv.Unquote(lit.Value)
			}
		}
	}
	return consts
}

// declSpecs yields the specs of files' declarations of kind tok, each with
// its declaration.
func declSpecs(files []*ast.File, tok token.Token) iter.Seq2[*ast.GenDecl, ast.Spec] {
	return func(yield func(*ast.GenDecl, ast.Spec) bool) {
		for _, f := range files {
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != tok {
					continue
				}
				for _, spec := range gd.Specs {
					if !yield(gd, spec) {
						return
					}
				}
			}
		}
	}
}

// conversionType is the type of constants declared without one, as a
// conversion (PathTypeExact = PathType("Exact")).
func conversionType(vs *ast.ValueSpec) (*ast.Ident, bool) {
	if vs.Type != nil || len(vs.Values) != 1 {
		return nil, false
	}
	call, ok := vs.Values[0].(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil, false
	}
	id, ok := call.Fun.(*ast.Ident)
	return id, ok
}

// constValue evaluates a constant given as another constant, of this
// package or another, or as a conversion of one.
func constValue(e ast.Expr, consts map[string]string, all map[string]map[string]string) (string, bool) {
	if call, ok := e.(*ast.CallExpr); ok && len(call.Args) == 1 {
		e = call.Args[0]
	}
	switch e := e.(type) {
	case *ast.Ident:
		v, ok := consts[e.Name]
		return v, ok
	case *ast.SelectorExpr:
		// Another package's constant: the API packages' names are unique
		// enough among their constants.
		for _, pkg := range sortedKeys(all) {
			if v, ok := all[pkg][e.Sel.Name]; ok {
				return v, true
			}
		}
	}
	return "", false
}

var update = flag.Bool("update", false, "rewrite zz_generated.enums.go from the API sources")

// TestEnums checks zz_generated.enums.go against the +enum types of the API
// sources and their constants, read the way kube's generator reads them;
// with -update it rewrites the file.
func TestEnums(t *testing.T) {
	type value struct{ name, value, comment string }
	enumTypes := map[string][]value{} // "pkgpath.Type"
	sources := apiSources(t)
	for _, pkgPath := range sortedKeys(sources) {
		for gd, spec := range declSpecs(sources[pkgPath], token.TYPE) {
			ts := spec.(*ast.TypeSpec)
			doc := ts.Doc
			if doc == nil && len(gd.Specs) == 1 {
				doc = gd.Doc
			}
			if id, ok := ts.Type.(*ast.Ident); ok && id.Name == "string" && hasMarker(doc, "+enum") {
				enumTypes[pkgPath+"."+ts.Name.Name] = []value{}
			}
		}
	}
	// String constants by package, then by name: conversions of other
	// packages' constants (AddressType(v1.IPv4Protocol)) are read from
	// them.
	allConsts := map[string]map[string]string{}
	for _, pkgPath := range sortedKeys(sources) {
		allConsts[pkgPath] = stringConsts(sources[pkgPath])
	}
	for _, pkgPath := range sortedKeys(sources) {
		consts := allConsts[pkgPath]
		for gd, spec := range declSpecs(sources[pkgPath], token.CONST) {
			vs := spec.(*ast.ValueSpec)
			typ, ok := vs.Type.(*ast.Ident)
			if !ok {
				typ, ok = conversionType(vs)
			}
			if !ok {
				continue
			}
			key := pkgPath + "." + typ.Name
			values, isEnum := enumTypes[key]
			if !isEnum {
				continue
			}
			doc := vs.Doc
			if doc == nil && !gd.Lparen.IsValid() {
				doc = gd.Doc
			}
			var lines []string
			if doc != nil {
				for _, c := range doc.List {
					lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(c.Text, "//"), " "))
				}
			}
			for i, name := range vs.Names {
				v, known := consts[name.Name]
				if !known && i < len(vs.Values) {
					v, known = constValue(vs.Values[i], consts, allConsts)
				}
				if !known {
					t.Errorf("%s: cannot evaluate %s", key, name.Name)
					continue
				}
				nv := value{name.Name, v, strings.Join(lines, " ")}
				// Like kube's generator: one entry per value, the
				// longest comment winning.
				dup := false
				for j, e := range values {
					if e.value == v {
						dup = true
						if len(e.comment) < len(nv.comment) || (len(e.comment) == len(nv.comment) && e.comment > nv.comment) {
							values[j] = nv
						}
					}
				}
				if !dup {
					values = append(values, nv)
				}
			}
			enumTypes[key] = values
		}
	}

	// Only the enums the definitions use (fields of inlined structs too).
	used := map[string]bool{}
	var use func(typ reflect.Type)
	use = func(typ reflect.Type) {
		for i := 0; i < typ.NumField(); i++ {
			ft := typ.Field(i).Type
			for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map {
				ft = ft.Elem()
			}
			used[ft.PkgPath()+"."+ft.Name()] = true
			if typ.Field(i).Anonymous && ft.Kind() == reflect.Struct {
				use(ft)
			}
		}
	}
	for _, typ := range builtin().types {
		if typ.Kind() == reflect.Struct {
			use(typ)
		}
	}
	whitespace := regexp.MustCompile(`\s+`)
	var b bytes.Buffer
	b.WriteString("// Code generated by go test -run TestEnums -update; DO NOT EDIT.\n\npackage openapi\n\n")
	b.WriteString("// enums are the +enum string types of the API packages: their values and\n")
	b.WriteString("// what kube's generator adds to the description of a field of the type.\n")
	b.WriteString("var enums = map[string]enumType{\n")
	for _, key := range sortedKeys(enumTypes) {
		values := enumTypes[key]
		if !used[key] || len(values) == 0 {
			continue
		}
		var literals, lines []string
		for _, v := range values {
			literals = append(literals, strconv.Quote(v.value))
			comment := whitespace.ReplaceAllString(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v.comment), v.name)), " ")
			lines = append(lines, strings.TrimRight(fmt.Sprintf(" - `%q` %s", v.value, comment), " "))
		}
		sort.Strings(literals)
		sort.Strings(lines)
		fmt.Fprintf(&b, "\t%q: {\n\t\tvalues: []string{%s},\n\t\tdoc: %q,\n\t},\n",
			key, strings.Join(literals, ", "), "Possible enum values:\n"+strings.Join(lines, "\n"))
	}
	b.WriteString("}\n\n")
	writeEnumParagraphBreaks(&b, sources, enumTypes)
	generated, err := format.Source(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("zz_generated.enums.go", generated, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if current, _ := os.ReadFile("zz_generated.enums.go"); !bytes.Equal(current, generated) {
		t.Error("zz_generated.enums.go is out of date: run go test ./internal/openapi -run TestEnums -update")
	}
}

// writeEnumParagraphBreaks writes the fields of an enum type whose comment
// ends (markers aside) in blank lines: kube's generator keeps each of them
// as one more line break before the "Possible enum values" it appends,
// where SwaggerDoc drops them.
func writeEnumParagraphBreaks[V any](b *bytes.Buffer, sources map[string][]*ast.File, enumTypes map[string]V) {
	blanks := map[string]int{} // "pkgpath.Type.Field"
	for pkgPath, files := range sources {
		for _, spec := range declSpecs(files, token.TYPE) {
			ts := spec.(*ast.TypeSpec)
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			for _, field := range st.Fields.List {
				if n := trailingBlankLines(field.Doc); n > 0 {
					for _, name := range field.Names {
						blanks[pkgPath+"."+ts.Name.Name+"."+name.Name] = n
					}
				}
			}
		}
	}
	breaks := map[string]int{} // definition.property
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			walk(f.Type)
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if _, isEnum := enumTypes[ft.PkgPath()+"."+ft.Name()]; !isEnum {
				continue
			}
			if n := blanks[t.PkgPath()+"."+t.Name()+"."+f.Name]; n > 0 {
				name, _, _ := jsonTag(f)
				breaks[typeName(t)+"."+name] = n
			}
		}
	}
	for _, typ := range builtin().types {
		walk(typ)
	}
	b.WriteString("// enumParagraphBreaks are the line breaks kube's generator adds, for the\n")
	b.WriteString("// field of an enum type named by definition and property, before the\n")
	b.WriteString("// paragraph of its enum values, beyond the paragraph's own.\n")
	b.WriteString("var enumParagraphBreaks = map[string]int{\n")
	for _, key := range sortedKeys(breaks) {
		fmt.Fprintf(b, "\t%q: %d,\n", key, breaks[key])
	}
	b.WriteString("}\n")
}

// trailingBlankLines counts the blank lines a doc comment ends with once its
// markers (+...) and TODOs are set aside, as kube's generator reads it.
func trailingBlankLines(doc *ast.CommentGroup) int {
	if doc == nil {
		return 0
	}
	blank := 0
	for _, line := range strings.Split(strings.TrimSuffix(doc.Text(), "\n"), "\n") {
		line = strings.TrimRight(line, " ")
		leading := strings.TrimLeft(line, " ")
		switch {
		case line == "":
			blank++
		case strings.HasPrefix(leading, "+"), strings.HasPrefix(leading, "TODO"):
		default:
			blank = 0
		}
	}
	return blank
}

func hasMarker(doc *ast.CommentGroup, marker string) bool {
	if doc == nil {
		return false
	}
	for _, c := range doc.List {
		if strings.TrimSpace(strings.TrimPrefix(c.Text, "//")) == marker {
			return true
		}
	}
	return false
}
