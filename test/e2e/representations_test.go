package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	cbordirect "k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// rawDo sends a request with the admin's credentials and returns the
// response with its body read.
func rawDo(t *testing.T, k *kapi, method, path, contentType, accept string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, k.config.Host+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := k.rawClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

func TestYAMLRequestsAndResponses(t *testing.T) {
	k := startKapi(t)
	// YAML 1.1, as kube-apiserver reads it: an unquoted y would be true.
	body := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"y\"\ndata:\n  n: \"1\"\n")
	resp, data := rawDo(t, k, "POST", "/api/v1/namespaces/default/configmaps", "application/yaml", "application/yaml", body)
	if resp.StatusCode != 201 || resp.Header.Get("Content-Type") != "application/yaml" || !strings.Contains(string(data), "name: \"y\"\n") ||
		!strings.Contains(string(data), "\"false\": \"1\"") { // the key n read as YAML 1.1
		t.Fatalf("YAML create: %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), data)
	}
	resp, data = rawDo(t, k, "GET", "/api/v1/namespaces/default/configmaps", "", "application/yaml", nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(string(data), "apiVersion: v1\nitems:\n") || !strings.Contains(string(data), "kind: ConfigMapList") {
		t.Fatalf("YAML list: %d\n%s", resp.StatusCode, data)
	}
	// Watches are never YAML: 406, with the Status itself in YAML.
	resp, data = rawDo(t, k, "GET", "/api/v1/namespaces/default/configmaps?watch=1", "", "application/yaml", nil)
	if resp.StatusCode != 406 || !strings.Contains(string(data), "kind: Status") || !strings.Contains(string(data), "stream=watch") {
		t.Fatalf("YAML watch: %d\n%s", resp.StatusCode, data)
	}
}

func TestProtobufEnvelopeAndWatchFrames(t *testing.T) {
	k := startKapi(t)
	if _, err := k.clientset().CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	resp, data := rawDo(t, k, "GET", "/api/v1/namespaces/default/configmaps/p", "", "application/vnd.kubernetes.protobuf", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/vnd.kubernetes.protobuf" || !bytes.HasPrefix(data, []byte("k8s\x00")) {
		t.Fatalf("protobuf get: %d %q % x", resp.StatusCode, resp.Header.Get("Content-Type"), data[:min(len(data), 8)])
	}
	// The envelope's typeMeta names the kind: field 1 (typeMeta) holds
	// apiVersion "v1" and kind "ConfigMap".
	if !bytes.Contains(data[:40], []byte("\x0a\x02v1\x12\x09ConfigMap")) {
		t.Fatalf("envelope typeMeta not found in % x", data[:40])
	}

	req, _ := http.NewRequest("GET", k.config.Host+"/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=2", nil)
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf")
	wresp, err := k.rawClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer wresp.Body.Close()
	if ct := wresp.Header.Get("Content-Type"); ct != "application/vnd.kubernetes.protobuf;stream=watch" {
		t.Fatalf("protobuf watch Content-Type %q", ct)
	}
	var size uint32
	if err := binary.Read(wresp.Body, binary.BigEndian, &size); err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, size)
	if _, err := io.ReadFull(wresp.Body, frame); err != nil {
		t.Fatal(err)
	}
	// A WatchEvent: field 1 is the type, field 2 the embedded object, itself
	// in the protobuf envelope.
	if !bytes.HasPrefix(frame, []byte("\x0a\x05ADDED\x12")) || !bytes.Contains(frame, []byte("k8s\x00")) {
		t.Fatalf("first frame % x", frame[:min(len(frame), 24)])
	}

	// Metadata lists in each version of meta.k8s.io decode as that
	// version's type (their protobuf fields are numbered otherwise).
	for version, list := range map[string]interface {
		runtime.Object
		Unmarshal([]byte) error
	}{"v1": &metav1.PartialObjectMetadataList{}, "v1beta1": &metav1beta1.PartialObjectMetadataList{}} {
		resp, data := rawDo(t, k, "GET", "/api/v1/namespaces/default/configmaps", "",
			"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v="+version, nil)
		var envelope runtime.Unknown
		if resp.StatusCode != 200 || !bytes.HasPrefix(data, []byte("k8s\x00")) {
			t.Fatalf("a %s metadata list in protobuf: %d % x", version, resp.StatusCode, data[:min(len(data), 8)])
		}
		if err := envelope.Unmarshal(data[4:]); err != nil || list.Unmarshal(envelope.Raw) != nil {
			t.Fatalf("a %s metadata list in protobuf: %v", version, err)
		}
		items, _ := meta.ExtractList(list)
		names := []string{}
		for _, item := range items {
			names = append(names, item.(*metav1.PartialObjectMetadata).Name)
		}
		if lm, _ := meta.ListAccessor(list); !slices.Contains(names, "p") || lm.GetResourceVersion() == "" {
			t.Errorf("the %s metadata list decoded: names %v, resourceVersion %q", version, names, lm.GetResourceVersion())
		}
	}
}

// TestGetAnswersFromTheSharedEncoding: a GET of a cached object is sent
// from the encoding a list made of it: the whole object, kind included,
// in JSON and in protobuf, with any resourceVersion; and after an update,
// the new state, never the bytes kept for the one before.
func TestGetAnswersFromTheSharedEncoding(t *testing.T) {
	k := startKapi(t)
	protobuf := rest.CopyConfig(k.config)
	protobuf.ContentType = "application/vnd.kubernetes.protobuf"
	clients := map[string]*kubernetes.Clientset{"JSON": k.clientset(), "protobuf": kubernetes.NewForConfigOrDie(protobuf)}
	cms := k.clientset().CoreV1().ConfigMaps("default")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "g"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for round, want := range []string{"1", "2"} {
		if round == 1 {
			cm.Data["v"] = want
			if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for name, client := range clients {
			// A list first, for the encodings to be there.
			if _, err := client.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, rv := range []string{"", "0", cm.ResourceVersion} {
				got, err := client.CoreV1().ConfigMaps("default").Get(ctx, "g", metav1.GetOptions{ResourceVersion: rv})
				if err != nil || got.Data["v"] != want || got.ResourceVersion != cm.ResourceVersion || got.UID != cm.UID {
					t.Fatalf("round %d, %s get at %q: %v %v at %s, want v=%s at %s", round, name, rv, err, got.Data, got.ResourceVersion, want, cm.ResourceVersion)
				}
			}
		}
		resp, data := rawDo(t, k, "GET", "/api/v1/namespaces/default/configmaps/g", "", "application/json", nil)
		var got map[string]any
		if err := json.Unmarshal(data, &got); err != nil || resp.StatusCode != 200 || got["kind"] != "ConfigMap" || got["apiVersion"] != "v1" ||
			!bytes.HasSuffix(data, []byte("}\n")) || resp.Header.Get("Content-Length") != fmt.Sprint(len(data)) {
			t.Fatalf("round %d, JSON get: %d %v %q (length %s)\n%s", round, resp.StatusCode, err, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Length"), data)
		}
	}
}

func TestCBORRoundTrip(t *testing.T) {
	k := startKapi(t)
	// Self-described CBOR for {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}.
	body := []byte("\xd9\xd9\xf7\xa3\x4aapiVersion\x42v1\x44kind\x49ConfigMap\x48metadata\xa1\x44name\x41c")
	resp, data := rawDo(t, k, "POST", "/api/v1/namespaces/default/configmaps", "application/cbor", "application/cbor", body)
	if resp.StatusCode != 201 || resp.Header.Get("Content-Type") != "application/cbor" || !bytes.HasPrefix(data, []byte("\xd9\xd9\xf7")) {
		t.Fatalf("CBOR create: %d %q % x", resp.StatusCode, resp.Header.Get("Content-Type"), data[:min(len(data), 8)])
	}
	cm, err := k.clientset().CoreV1().ConfigMaps("default").Get(ctx, "c", metav1.GetOptions{})
	if err != nil || cm.Name != "c" {
		t.Fatalf("CBOR-created configmap: %v", err)
	}

	// An applied configuration in CBOR that does not decode: kube's words.
	resp, data = rawDo(t, k, "PATCH", "/api/v1/namespaces/default/configmaps/c?fieldManager=m", "application/apply-patch+cbor", "application/json", []byte("\xd9\xd9\xf7\xa2\x61"))
	if want := `"message":"error decoding patch: unexpected EOF"`; resp.StatusCode != 400 || !bytes.Contains(data, []byte(want)) {
		t.Errorf("a truncated CBOR apply: %d %s, want 400 %s", resp.StatusCode, data, want)
	}
	// DeleteOptions in CBOR, as a client preferring CBOR sends them.
	deleteOptions := func(uid string) []byte {
		body, err := cbordirect.Marshal(map[string]any{"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": map[string]any{"uid": uid}})
		if err != nil {
			t.Fatal(err)
		}
		return body
	}
	resp, data = rawDo(t, k, "DELETE", "/api/v1/namespaces/default/configmaps/c", "application/cbor", "application/json", deleteOptions("not-its-uid"))
	if resp.StatusCode != 409 || !bytes.Contains(data, []byte("the UID in the precondition (not-its-uid) does not match the UID in record")) {
		t.Errorf("a CBOR delete with another UID: %d %s, want 409", resp.StatusCode, data)
	}
	resp, data = rawDo(t, k, "DELETE", "/api/v1/namespaces/default/configmaps/c", "application/cbor", "application/json", deleteOptions(string(cm.UID)))
	if resp.StatusCode != 200 {
		t.Errorf("a CBOR delete: %d %s", resp.StatusCode, data)
	}
}

func TestTables(t *testing.T) {
	k := startKapi(t, withoutRootCA)
	k.mustKubectl("create", "configmap", "one", "--from-literal=a=1", "--from-literal=b=2")
	const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
	resp, data := rawDo(t, k, "GET", "/api/v1/namespaces/default/configmaps", "", tableAccept, nil)
	var table metav1.Table
	if err := json.Unmarshal(data, &table); err != nil || resp.StatusCode != 200 || table.Kind != "Table" || table.APIVersion != "meta.k8s.io/v1" {
		t.Fatalf("table list: %d %v\n%s", resp.StatusCode, err, data)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "Name,Data,Age" || len(table.Rows) != 1 || table.Rows[0].Cells[0] != "one" || table.Rows[0].Cells[1] != float64(2) {
		t.Fatalf("configmap table: columns %v rows %+v", names, table.Rows)
	}
	if table.ResourceVersion == "" || !strings.Contains(string(table.Rows[0].Object.Raw), `"kind":"PartialObjectMetadata"`) {
		t.Fatalf("table metadata: rv %q, row object %s", table.ResourceVersion, table.Rows[0].Object.Raw)
	}
	_, data = rawDo(t, k, "GET", "/api/v1/namespaces/default/configmaps/one?includeObject=None", "", tableAccept, nil)
	table = metav1.Table{}
	json.Unmarshal(data, &table)
	if len(table.Rows) != 1 || (table.Rows[0].Object.Raw != nil && string(table.Rows[0].Object.Raw) != "null") {
		t.Fatalf("includeObject=None: %s", data)
	}
	// Protobuf tables do not exist.
	resp, _ = rawDo(t, k, "GET", "/api/v1/namespaces/default/configmaps", "", "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", nil)
	if resp.StatusCode != 406 {
		t.Fatalf("protobuf table: %d", resp.StatusCode)
	}
	// kubectl prints the server's columns.
	out := k.mustKubectl("get", "configmaps")
	if !strings.HasPrefix(out, "NAME               DATA   AGE\n") && !strings.Contains(out, "DATA") {
		t.Fatalf("kubectl get configmaps:\n%s", out)
	}
}

func TestMetadataClientAndInformer(t *testing.T) {
	k := startKapi(t, withoutRootCA)
	k.mustKubectl("create", "configmap", "m", "--from-literal=a=1")
	mc, err := metadata.NewForConfig(k.config)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	list, err := mc.Resource(gvr).Namespace("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "m" {
		t.Fatalf("metadata list: %v %+v", err, list)
	}
	one, err := mc.Resource(gvr).Namespace("default").Get(ctx, "m", metav1.GetOptions{})
	if err != nil || one.Name != "m" || one.ResourceVersion == "" {
		t.Fatalf("metadata get: %v %+v", err, one)
	}

	factory := metadatainformer.NewSharedInformerFactory(mc, 0)
	informer := factory.ForResource(gvr).Informer()
	added := make(chan string, 10)
	informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj interface{}) {
		added <- obj.(*metav1.PartialObjectMetadata).Name
	}})
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	k.mustKubectl("create", "configmap", "later")
	seen := map[string]bool{}
	deadline := time.After(15 * time.Second)
	for !seen["m"] || !seen["later"] {
		select {
		case name := <-added:
			seen[name] = true
		case <-deadline:
			t.Fatalf("metadata informer saw only %v", seen)
		}
	}
}

func TestGzipLargeLists(t *testing.T) {
	k := startKapi(t)
	cms := k.clientset().CoreV1().ConfigMaps("default")
	big := strings.Repeat("x", 40*1024)
	for i := 0; i < 5; i++ {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("big-", i)}, Data: map[string]string{"v": big}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	req, _ := http.NewRequest("GET", k.config.Host+"/api/v1/namespaces/default/configmaps", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := k.rawClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("large list not compressed: %v", resp.Header)
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(zr)
	if !bytes.Contains(data, []byte(`"kind":"ConfigMapList"`)) {
		t.Fatalf("decompressed body: %.100s", data)
	}
	// The same items listed again (their compressed section sent again,
	// in JSON and in protobuf), then after one changed, read back whole.
	protobuf := rest.CopyConfig(k.config)
	protobuf.ContentType = "application/vnd.kubernetes.protobuf"
	for _, client := range []*kubernetes.Clientset{k.clientset(), kubernetes.NewForConfigOrDie(protobuf)} {
		cms := client.CoreV1().ConfigMaps("default")
		for round, want := range []string{"x", "x", "z"} {
			if round == 2 {
				cm, _ := cms.Get(ctx, "big-2", metav1.GetOptions{})
				cm.Data["v"] = strings.Repeat(want, 40*1024)
				if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			list, err := cms.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, cm := range list.Items {
				if v, ok := cm.Data["v"]; ok {
					got[cm.Name] = v[:1] + fmt.Sprint(len(v))
				}
			}
			if len(got) != 5 || got["big-2"] != want+"40960" || got["big-4"][:1] != "x" {
				t.Fatalf("list %d: %v, want big-2 of %q", round, got, want)
			}
		}
		// The next client starts from the first value again.
		cm, _ := cms.Get(ctx, "big-2", metav1.GetOptions{})
		cm.Data["v"] = big
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// A small response is sent as it is; so is a large one to a client
	// whose Accept-Encoding names gzip other than as the bare token (kube's
	// rule); a large error is compressed as any answer.
	encoding := func(path, acceptEncoding string) (int, string) {
		req, _ := http.NewRequest("GET", k.config.Host+path, nil)
		req.Header.Set("Accept-Encoding", acceptEncoding)
		resp, err := k.rawClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Content-Encoding")
	}
	list := "/api/v1/namespaces/default/configmaps"
	for _, c := range []struct{ path, acceptEncoding, want string }{
		{"/api/v1/namespaces", "gzip", ""},
		{list, "deflate, gzip", "gzip"},
		{list, "gzip;q=1", ""},
		{list, "GZIP", ""},
		{list, "*", ""},
		{list + "/" + strings.Repeat("a", 70000), "gzip", "gzip"},
	} {
		if _, got := encoding(c.path, c.acceptEncoding); got != c.want {
			t.Errorf("GET %.60s with Accept-Encoding %q: Content-Encoding %q, want %q", c.path, c.acceptEncoding, got, c.want)
		}
	}
}

// TestPrettyJSON: with ?pretty=true, or for curl, a JSON answer is
// indented exactly as kube-apiserver's pretty serializer writes it: an
// object, a list spliced from its items' encodings, and an error.
func TestPrettyJSON(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	k.mustKubectl("create", "configmap", "pretty", "--from-literal=a=<b>")
	pretty := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, kjson.SerializerOptions{Pretty: true})
	get := func(path, agent string) []byte {
		req, _ := http.NewRequest("GET", k.config.Host+path, nil)
		req.Header.Set("Accept", "application/json")
		if agent != "" {
			req.Header.Set("User-Agent", agent)
		}
		resp, err := k.rawClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return data
	}
	want := func(obj runtime.Object, gvk schema.GroupVersionKind) []byte {
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		var buf bytes.Buffer
		if err := pretty.Encode(obj, &buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	cm, err := k.clientset().CoreV1().ConfigMaps("default").Get(ctx, "pretty", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantCM := want(cm, corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if got := get("/api/v1/namespaces/default/configmaps/pretty?pretty=true", ""); !bytes.Equal(got, wantCM) {
		t.Errorf("?pretty=true:\n%s\nwant\n%s", got, wantCM)
	}
	if got := get("/api/v1/namespaces/default/configmaps/pretty", "curl/8.5.0"); !bytes.Equal(got, wantCM) {
		t.Errorf("for curl:\n%s\nwant\n%s", got, wantCM)
	}
	if got := get("/api/v1/namespaces/default/configmaps/pretty?pretty=false", "curl/8.5.0"); bytes.Contains(got, []byte("\n  ")) {
		t.Errorf("?pretty=false for curl is indented:\n%s", got)
	}
	list, err := k.clientset().CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=pretty"})
	if err != nil {
		t.Fatal(err)
	}
	got := get("/api/v1/namespaces/default/configmaps?pretty=1&fieldSelector=metadata.name%3Dpretty&resourceVersion="+list.ResourceVersion+"&resourceVersionMatch=Exact", "")
	if wantList := want(list, corev1.SchemeGroupVersion.WithKind("ConfigMapList")); !bytes.Equal(got, wantList) {
		t.Errorf("a list:\n%s\nwant\n%s", got, wantList)
	}
	if got := get("/api/v1/namespaces/default/configmaps/absent", "curl/8.5.0"); !bytes.HasPrefix(got, []byte("{\n  \"kind\": \"Status\",")) {
		t.Errorf("an error for curl:\n%s", got)
	}
}

// TestTableRowsAsKubePrintsThem: a list printer that orders its rows
// (FlowSchemas, by precedence) gives each row its own object; a Scale's
// row object names its kind; the bookmark that ends a watch's initial
// events keeps its metadata even when includeObject=None; and the
// sub-resources kube-apiserver cannot print (a pod's log, its ephemeral
// containers) answer a Table request with 406.
func TestTableRowsAsKubePrintsThem(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	const table = "application/json;as=Table;v=v1;g=meta.k8s.io"
	type row struct {
		Cells  []any `json:"cells"`
		Object struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name        string            `json:"name"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		} `json:"object"`
	}
	readRows := func(path string) []row {
		resp, body := rawDo(t, k, http.MethodGet, path, "", table, nil)
		var got struct{ Rows []row }
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &got) != nil {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		return got.Rows
	}
	rows := readRows("/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas")
	if len(rows) < 2 || rows[0].Cells[0] != "exempt" {
		t.Fatalf("FlowSchemas not in kube's order: %+v", rows)
	}
	for _, r := range rows {
		if r.Cells[0] != r.Object.Metadata.Name {
			t.Errorf("the row of %v carries the object of %s", r.Cells[0], r.Object.Metadata.Name)
		}
	}

	k.mustKubectl("create", "deployment", "web", "--image=x")
	if rows := readRows("/apis/apps/v1/namespaces/default/deployments/web/scale?includeObject=Object"); len(rows) != 1 || rows[0].Object.Kind != "Scale" {
		t.Errorf("a Scale's row: %+v", rows)
	}

	resp, body := rawDo(t, k, http.MethodGet, "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&includeObject=None&timeoutSeconds=2", "", table, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"k8s.io/initial-events-end":"true"`) {
		t.Errorf("the initial events' bookmark as a Table without objects: %d %s", resp.StatusCode, body)
	}

	k.mustKubectl("run", "p", "--image=x")
	for _, sub := range []string{"log", "ephemeralcontainers"} {
		if resp, body := rawDo(t, k, http.MethodGet, "/api/v1/namespaces/default/pods/p/"+sub, "", table, nil); resp.StatusCode != http.StatusNotAcceptable {
			t.Errorf("pods/%s as a Table: %d %s", sub, resp.StatusCode, body)
		}
	}
}

// TestUnencodableAnswer: an object YAML cannot hold (a control character)
// read as YAML is kube-apiserver's bare 500, with the encoder's words and
// no reason.
func TestUnencodableAnswer(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	if _, err := k.clientset().CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "control"}, Data: map[string]string{"a": "x\x7fy"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	resp, body := rawDo(t, k, http.MethodGet, "/api/v1/namespaces/default/configmaps/control", "", "application/yaml", nil)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "message: 'yaml: control characters are not allowed'") ||
		strings.Contains(string(body), "reason:") {
		t.Errorf("a ConfigMap with a control character as YAML: %d %s", resp.StatusCode, body)
	}
}
