package e2e

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/serviceaccount"
)

// tokenUsers are the users of the static token file the security tests
// start kapi with: token, name, groups.
var tokenUsers = []struct{ token, name, groups string }{
	{"viewer-token", "vera", "viewers"},
	{"editor-token", "eddie", "editors"},
	{"admin-token", "ada", ""},
	{"nobody-token", "nobody", ""},
}

// startKapiWithTokens starts kapi with a static token file of tokenUsers.
func startKapiWithTokens(t *testing.T, extraArgs ...string) *kapi {
	t.Helper()
	var lines []string
	for i, u := range tokenUsers {
		lines = append(lines, fmt.Sprintf("%s,%s,uid-%d,%q", u.token, u.name, i, u.groups))
	}
	path := filepath.Join(t.TempDir(), "tokens.csv")
	if err := writeFile(path, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
	return startKapi(t, append([]string{"--token-auth-file", path}, extraArgs...)...)
}

// clientWithToken is a client of k that presents only a bearer token.
func (k *kapi) clientWithToken(token string) *kubernetes.Clientset {
	cfg := rest.AnonymousClientConfig(k.config)
	cfg.BearerToken = token
	return kubernetes.NewForConfigOrDie(cfg)
}

// TestRBACMatrix tries every verb on several resources as users bound to
// the bootstrap roles view, edit and admin (and as one bound to nothing),
// and checks each answer against what those roles grant in Kubernetes.
func TestRBACMatrix(t *testing.T) {
	k := startKapiWithTokens(t, onlyLifecycleControllers)
	k.mustKubectl("create", "namespace", "team")
	k.mustKubectl("create", "rolebinding", "viewers", "--clusterrole=view", "--group=viewers", "-n", "team")
	k.mustKubectl("create", "rolebinding", "editors", "--clusterrole=edit", "--group=editors", "-n", "team")
	k.mustKubectl("create", "rolebinding", "ada-admin", "--clusterrole=admin", "--user=ada", "-n", "team")
	k.mustKubectl("create", "configmap", "existing", "-n", "team")
	k.mustKubectl("create", "secret", "generic", "existing", "-n", "team")
	k.mustKubectl("create", "role", "existing", "--verb=get", "--resource=configmaps", "-n", "team")

	type want map[string]bool // verb → allowed
	all := func(allowed bool) want {
		return want{"get": allowed, "list": allowed, "create": allowed, "update": allowed, "delete": allowed}
	}
	readOnly := want{"get": true, "list": true, "create": false, "update": false, "delete": false}
	matrix := map[string]map[string]want{ // user → resource → verbs
		"vera":   {"configmaps": readOnly, "secrets": all(false), "roles": all(false)},
		"eddie":  {"configmaps": all(true), "secrets": all(true), "roles": all(false)},
		"ada":    {"configmaps": all(true), "secrets": all(true), "roles": all(true)},
		"nobody": {"configmaps": all(false), "secrets": all(false), "roles": all(false)},
	}
	tokens := map[string]string{}
	for _, u := range tokenUsers {
		tokens[u.name] = u.token
	}
	for user, resources := range matrix {
		client := k.clientWithToken(tokens[user])
		for resource, verbs := range resources {
			for verb, allowed := range verbs {
				err := tryVerb(client, resource, verb)
				switch {
				case allowed && err != nil:
					t.Errorf("%s %s %s: %v, want allowed", user, verb, resource, err)
				case !allowed && !apierrors.IsForbidden(err):
					t.Errorf("%s %s %s: %v, want Forbidden", user, verb, resource, err)
				case !allowed:
					msg := fmt.Sprintf(`User %q cannot %s resource %q in API group`, user, verb, resource)
					if !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), `in the namespace "team"`) {
						t.Errorf("%s %s %s: message %q", user, verb, resource, err)
					}
				}
			}
		}
	}
	// A dry run needs the same permission as the write (SPEC F4).
	_, err := k.clientWithToken("viewer-token").CoreV1().ConfigMaps("team").Create(ctx,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsForbidden(err) {
		t.Errorf("a viewer's dry-run create: %v, want Forbidden", err)
	}
	// Outside the namespace they are bound in, nobody may read.
	if _, err := k.clientWithToken("admin-token").CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("ada listing configmaps in default: %v", err)
	}
}

// TestWatchOfOneObjectByName: a list or watch that selects one object by
// metadata.name is authorised as a request for that name, so a role
// limited to resourceNames lets its user watch the object (as `kubectl
// get NAME --watch` does) but not list the others.
func TestWatchOfOneObjectByName(t *testing.T) {
	k := startKapiWithTokens(t, onlyLifecycleControllers)
	k.mustKubectl("create", "configmap", "mine")
	k.mustKubectl("create", "configmap", "theirs")
	k.mustKubectl("create", "role", "only-mine", "--verb=get,list,watch", "--resource=configmaps", "--resource-name=mine")
	k.mustKubectl("create", "rolebinding", "only-mine", "--role=only-mine", "--user=nobody")
	configMaps := k.clientWithToken("nobody-token").CoreV1().ConfigMaps("default")
	waitFor(t, 10*time.Second, "the binding to take effect", func() bool {
		_, err := configMaps.Get(ctx, "mine", metav1.GetOptions{})
		return err == nil
	})

	one := int64(1)
	w, err := configMaps.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=mine", TimeoutSeconds: &one})
	if err != nil {
		t.Fatalf("watching mine by name: %v", err)
	}
	var names []string
	for ev := range w.ResultChan() {
		if cm, ok := ev.Object.(*corev1.ConfigMap); ok {
			names = append(names, cm.Name)
		}
	}
	if len(names) != 1 || names[0] != "mine" {
		t.Errorf("the watch of mine sent %v, want its ADDED event", names)
	}
	list, err := configMaps.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=mine"})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("listing mine by name: %v, %v", list, err)
	}
	for _, opts := range []metav1.ListOptions{{}, {FieldSelector: "metadata.name=theirs"}, {FieldSelector: "metadata.name!=mine"}} {
		if _, err := configMaps.List(ctx, opts); !apierrors.IsForbidden(err) {
			t.Errorf("listing with %q: %v, want Forbidden", opts.FieldSelector, err)
		}
	}
	// As kube's, the name is the request's only when all of its list
	// options parse: with one that does not, the list is of no name.
	err = k.clientWithToken("nobody-token").CoreV1().RESTClient().Get().Namespace("default").Resource("configmaps").
		Param("fieldSelector", "metadata.name=mine").Param("limit", "abc").Do(ctx).Error()
	if want := `configmaps is forbidden: User "nobody" cannot list resource "configmaps"`; !apierrors.IsForbidden(err) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("listing mine by name with a limit that does not parse: %v, want %s", err, want)
	}
	// The removed /proxy/ prefix is still read as the verb proxy, as by
	// kube-apiserver, and then has no route.
	err = k.clientWithToken("nobody-token").CoreV1().RESTClient().Get().AbsPath("/api/v1/proxy/namespaces/default/pods/p1").Do(ctx).Error()
	if want := `pods "p1" is forbidden: User "nobody" cannot proxy resource "pods" in API group "" in the namespace "default"`; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("a /proxy/ path: %v, want %s", err, want)
	}
	if err := k.clientset().CoreV1().RESTClient().Get().AbsPath("/api/v1/proxy/namespaces/default/pods/p1").Do(ctx).Error(); !apierrors.IsNotFound(err) {
		t.Errorf("a /proxy/ path as the admin: %v, want 404", err)
	}
}

// tryVerb does verb on an object of resource in the namespace team (a
// fresh name for create and delete, "existing" for get and update).
func tryVerb(c *kubernetes.Clientset, resource, verb string) error {
	ns := "team"
	name := fmt.Sprintf("made-by-%d", time.Now().UnixNano())
	switch resource + "/" + verb {
	case "configmaps/get":
		_, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "existing", metav1.GetOptions{})
		return err
	case "configmaps/list":
		_, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		return err
	case "configmaps/create":
		_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		return err
	case "configmaps/update":
		_, err := c.CoreV1().ConfigMaps(ns).Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "existing"}, Data: map[string]string{"n": name}}, metav1.UpdateOptions{})
		return err
	case "configmaps/delete":
		return deleteMissing(c.CoreV1().ConfigMaps(ns).Delete)
	case "secrets/get":
		_, err := c.CoreV1().Secrets(ns).Get(ctx, "existing", metav1.GetOptions{})
		return err
	case "secrets/list":
		_, err := c.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
		return err
	case "secrets/create":
		_, err := c.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		return err
	case "secrets/update":
		_, err := c.CoreV1().Secrets(ns).Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "existing"}, StringData: map[string]string{"n": name}}, metav1.UpdateOptions{})
		return err
	case "secrets/delete":
		return deleteMissing(c.CoreV1().Secrets(ns).Delete)
	case "roles/get":
		_, err := c.RbacV1().Roles(ns).Get(ctx, "existing", metav1.GetOptions{})
		return err
	case "roles/list":
		_, err := c.RbacV1().Roles(ns).List(ctx, metav1.ListOptions{})
		return err
	case "roles/create":
		_, err := c.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		return err
	case "roles/update":
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "existing"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"},
		}}}
		_, err := c.RbacV1().Roles(ns).Update(ctx, role, metav1.UpdateOptions{})
		return err
	case "roles/delete":
		return deleteMissing(c.RbacV1().Roles(ns).Delete)
	}
	return fmt.Errorf("no way to %s %s", verb, resource)
}

// deleteMissing deletes a name nobody made: a user allowed to delete gets
// NotFound (authorisation comes first), which counts as allowed.
func deleteMissing(del func(context.Context, string, metav1.DeleteOptions) error) error {
	err := del(ctx, "never-made", metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// TestAuthCanIAndWhoami: kubectl auth can-i (also --list) and auth whoami
// answer as on a real cluster, for the admin and for impersonated users.
func TestAuthCanIAndWhoami(t *testing.T) {
	k := startKapiWithTokens(t, onlyLifecycleControllers)
	k.mustKubectl("create", "rolebinding", "vera-view", "--clusterrole=view", "--user=vera", "-n", "default")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"auth", "can-i", "get", "pods", "--as", "vera"}, "yes"},
		{[]string{"auth", "can-i", "create", "pods", "--as", "vera"}, "no"},
		{[]string{"auth", "can-i", "get", "pods", "-n", "kube-system", "--as", "vera"}, "no"},
		{[]string{"auth", "can-i", "get", "secrets", "--as", "vera"}, "no"},
		{[]string{"auth", "can-i", "create", "selfsubjectreviews.authentication.k8s.io", "--as", "nobody"}, "yes"},
		{[]string{"auth", "can-i", "get", "/healthz", "--as", "nobody"}, "yes"},
		{[]string{"auth", "can-i", "*", "*"}, "yes"},
	}
	for _, c := range cases {
		out, _ := k.kubectl(c.args...)                       // "no" exits 1
		lines := strings.Split(strings.TrimSpace(out), "\n") // after kubectl's warnings
		if got := lines[len(lines)-1]; got != c.want {
			t.Errorf("kubectl %s = %q, want %q", strings.Join(c.args, " "), got, c.want)
		}
	}
	list := k.mustKubectl("auth", "can-i", "--list", "--as", "vera", "-n", "default")
	for _, want := range []string{"configmaps", "[get list watch]", "selfsubjectreviews.authentication.k8s.io"} {
		if !strings.Contains(list, want) {
			t.Errorf("kubectl auth can-i --list as vera lacks %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, "secrets ") {
		t.Errorf("vera may list secrets:\n%s", list)
	}
	who := k.mustKubectl("auth", "whoami", "--as", "vera", "--as-group", "viewers")
	if !strings.Contains(who, "vera") || !strings.Contains(who, "viewers") || !strings.Contains(who, "system:authenticated") {
		t.Errorf("kubectl auth whoami --as vera:\n%s", who)
	}
}

// TestImpersonation: impersonating needs the impersonate verb on users,
// groups or service accounts, with kube-apiserver's refusal otherwise.
func TestImpersonation(t *testing.T) {
	k := startKapiWithTokens(t, onlyLifecycleControllers)
	eddie := rest.AnonymousClientConfig(k.config)
	eddie.BearerToken = "editor-token"
	eddie.Impersonate = rest.ImpersonationConfig{UserName: "vera"}
	_, err := kubernetes.NewForConfigOrDie(eddie).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	// kube-apiserver 1.37 checks the constrained impersonation verbs first
	// (ConstrainedImpersonation is on) and reports the first refusal.
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "eddie" cannot impersonate-on:user-info:list resource "configmaps"`) {
		t.Errorf("impersonating without permission: %v", err)
	}
	k.mustKubectl("create", "clusterrole", "impersonator", "--verb=impersonate", "--resource=users,groups")
	k.mustKubectl("create", "clusterrolebinding", "eddie-impersonates", "--clusterrole=impersonator", "--user=eddie")
	k.mustKubectl("create", "rolebinding", "vera-view", "--clusterrole=view", "--user=vera", "-n", "default")
	waitFor(t, 10*time.Second, "eddie to list configmaps as vera", func() bool {
		_, err = kubernetes.NewForConfigOrDie(eddie).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		return err == nil
	})
	review, err := kubernetes.NewForConfigOrDie(eddie).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || review.Status.UserInfo.Username != "vera" {
		t.Errorf("whoami while impersonating: %+v, %v", review, err)
	}
	_, err = kubernetes.NewForConfigOrDie(eddie).CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "vera" cannot list resource "secrets"`) {
		t.Errorf("vera's rights while impersonated: %v", err)
	}
}

// TestServiceAccountTokens: kubectl create token issues a token that
// authenticates as the service account, with its RBAC rights, until the
// service account is deleted; the token's issuer publishes its key set.
func TestServiceAccountTokens(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers)
	k.mustKubectl("create", "serviceaccount", "bot")
	token := strings.TrimSpace(k.mustKubectl("create", "token", "bot"))
	bot := k.clientWithToken(token)
	review, err := bot.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	info := review.Status.UserInfo
	if info.Username != "system:serviceaccount:default:bot" || !strings.Contains(strings.Join(info.Groups, ","), "system:serviceaccounts:default") {
		t.Errorf("the token authenticates as %+v", info)
	}
	if _, err := bot.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the service account lists pods without a role: %v", err)
	}
	k.mustKubectl("create", "rolebinding", "bot-view", "--clusterrole=view", "--serviceaccount=default:bot")
	waitFor(t, 10*time.Second, "the service account's role", func() bool {
		_, err := bot.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		return err == nil
	})
	out, err := k.kubectl("create", "token", "bot", "--duration=1m")
	if err == nil || !strings.Contains(out, "may not specify a duration less than 10 minutes") {
		t.Errorf("a one-minute token: %v\n%s", err, out)
	}
	out, err = k.kubectl("create", "token", "nosuch")
	if err == nil || !strings.Contains(out, `serviceaccounts "nosuch" not found`) {
		t.Errorf("a token for a missing service account: %v\n%s", err, out)
	}
	tr, err := k.clientset().AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token},
	}, metav1.CreateOptions{})
	if err != nil || !tr.Status.Authenticated || tr.Status.User.Username != "system:serviceaccount:default:bot" ||
		len(tr.Status.Audiences) != 1 || tr.Status.Audiences[0] != "https://kubernetes.default.svc.cluster.local" {
		t.Errorf("a TokenReview of the token: %+v, %v", tr.Status, err)
	}
	jwks := k.mustKubectl("get", "--raw", "/openid/v1/jwks")
	if !strings.Contains(jwks, `"keys"`) || !strings.Contains(jwks, `"use":"sig"`) {
		t.Errorf("jwks: %s", jwks)
	}
	config := k.mustKubectl("get", "--raw", "/.well-known/openid-configuration")
	if !strings.Contains(config, `"issuer":"https://kubernetes.default.svc.cluster.local"`) {
		t.Errorf("openid configuration: %s", config)
	}
	// With a trailing slash, as the Python client asks for them.
	for path, want := range map[string]string{"/openid/v1/jwks/": `"keys"`, "/.well-known/openid-configuration/": `"issuer"`} {
		if out, err := k.kubectl("get", "--raw", path); err != nil || !strings.Contains(out, want) {
			t.Errorf("GET %s: %v %s", path, err, out)
		}
	}

	k.mustKubectl("delete", "serviceaccount", "bot")
	waitFor(t, 10*time.Second, "the deleted service account's token to stop working", func() bool {
		_, err := bot.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		return apierrors.IsUnauthorized(err)
	})
}

// TestServiceAccountTokenFlags: kube-apiserver's flags for service account
// tokens: tokens are signed with the given key for the first issuer and
// the API's audiences, accepted from an earlier key and issuer, shortened
// to the maximum expiration with kube's warning, refused for another
// audience; the discovery documents name the issuer, both keys and the
// key set's given address; wrong values stop the start with kube's words.
func TestServiceAccountTokenFlags(t *testing.T) {
	dir := t.TempDir()
	signing, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	earlier, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signingFile, earlierFile := filepath.Join(dir, "sa.key"), filepath.Join(dir, "earlier.pub")
	if err := writeFile(signingFile, string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(signing)}))); err != nil {
		t.Fatal(err)
	}
	earlierDER, _ := x509.MarshalPKIXPublicKey(&earlier.PublicKey)
	if err := writeFile(earlierFile, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: earlierDER}))); err != nil {
		t.Fatal(err)
	}
	const issuer, earlierIssuer = "https://issuer.example", "https://earlier.example"
	k := startKapi(t, onlyLifecycleControllers, "--service-account-signing-key-file", signingFile, "--service-account-key-file", earlierFile,
		"--service-account-issuer", issuer, "--service-account-issuer", earlierIssuer, "--api-audiences", "api.example,"+issuer,
		"--service-account-max-token-expiration", "2h", "--service-account-jwks-uri", "https://keys.example/jwks")
	k.mustKubectl("create", "serviceaccount", "bot")
	sa, err := k.clientset().CoreV1().ServiceAccounts("default").Get(ctx, "bot", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	warnings := &warningRecorder{}
	cfg := rest.CopyConfig(k.config)
	cfg.WarningHandler = warnings
	long := int64(10000)
	tr, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ServiceAccounts("default").CreateToken(ctx, "bot", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &long},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := *tr.Spec.ExpirationSeconds; got != 7200 {
		t.Errorf("a 10000-second token request was answered with expirationSeconds %d, want the maximum 7200", got)
	}
	if left := time.Until(tr.Status.ExpirationTimestamp.Time); left < 7100*time.Second || left > 7300*time.Second {
		t.Errorf("the token expires in %v, want 2h", left)
	}
	if want := "requested expiration of 10000 seconds shortened to 7200 seconds"; !slices.Contains(warnings.all(), want) {
		t.Errorf("warnings %q, want %q", warnings.all(), want)
	}
	header, claims := jwtParts(t, tr.Status.Token)
	if header["alg"] != "RS256" || claims["iss"] != issuer || fmt.Sprint(claims["aud"]) != "[api.example "+issuer+"]" {
		t.Errorf("token header %v, claims iss %v aud %v", header, claims["iss"], claims["aud"])
	}
	if _, err := k.clientWithToken(tr.Status.Token).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{}); err != nil {
		t.Errorf("the token does not authenticate: %v", err)
	}

	// A token the earlier key signed for the earlier issuer.
	earlierToken := signedToken(t, earlier, earlierIssuer, sa, []string{"api.example"})
	review, err := k.clientWithToken(earlierToken).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || review.Status.UserInfo.Username != "system:serviceaccount:default:bot" {
		t.Errorf("the earlier key's token: %v %+v", err, review)
	}
	// Tokens for another audience, or by an issuer not named, do not.
	for name, token := range map[string]string{
		"another audience": signedToken(t, signing, issuer, sa, []string{"vault"}),
		"another issuer":   signedToken(t, signing, "https://other.example", sa, []string{"api.example"}),
	} {
		_, err := k.clientWithToken(token).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Errorf("a token for %s: %v, want 401", name, err)
		}
	}

	var config struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.Unmarshal([]byte(k.mustKubectl("get", "--raw", "/.well-known/openid-configuration")), &config); err != nil || config.Issuer != issuer || config.JWKSURI != "https://keys.example/jwks" {
		t.Errorf("openid configuration: %+v %v", config, err)
	}
	var jwks struct {
		Keys []struct {
			Kty string `json:"kty"`
		} `json:"keys"`
	}
	if err := json.Unmarshal([]byte(k.mustKubectl("get", "--raw", "/openid/v1/jwks")), &jwks); err != nil || len(jwks.Keys) != 2 || jwks.Keys[0].Kty != "RSA" || jwks.Keys[1].Kty != "EC" {
		t.Errorf("key set: %+v %v, want the RSA signing key and the earlier EC key", jwks, err)
	}

	for flags, want := range map[string]string{
		"--service-account-max-token-expiration=5m":         "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds",
		"--service-account-jwks-uri=http://keys.example":    "service-account-jwks-uri requires https scheme, parsed as: http://keys.example",
		"--service-account-issuer=":                         "service-account-issuer should not be an empty string",
		"--service-account-signing-key-file=" + earlierFile: "failed to parse service-account-issuer-key-file",
	} {
		stopped, cancel := context.WithTimeout(ctx, 30*time.Second)
		out, err := exec.CommandContext(stopped, kapiBinary, "serve", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", flags).CombinedOutput()
		cancel()
		if err == nil || !strings.Contains(string(out), want) {
			t.Errorf("kapi serve %s: %v\n%s", flags, err, out)
		}
	}

	// An issuer that is no https URL: tokens work, the discovery
	// documents are not served, as from kube-apiserver.
	plain := startKapi(t, onlyLifecycleControllers, "--service-account-issuer", "api")
	plain.mustKubectl("create", "serviceaccount", "bot")
	token := strings.TrimSpace(plain.mustKubectl("create", "token", "bot"))
	if _, claims := jwtParts(t, token); claims["iss"] != "api" {
		t.Errorf("issuer %v, want api", claims["iss"])
	}
	if _, err := plain.clientWithToken(token).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{}); err != nil {
		t.Errorf("a token of issuer api: %v", err)
	}
	if resp, _ := rawDo(t, plain, http.MethodGet, "/.well-known/openid-configuration", "", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("openid configuration of issuer api: %d, want 404", resp.StatusCode)
	}
}

// jwtParts decodes a JWT's header and claims (unverified).
func jwtParts(t *testing.T, token string) (header, claims map[string]interface{}) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	for i, into := range []*map[string]interface{}{&header, &claims} {
		data, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err == nil {
			err = json.Unmarshal(data, into)
		}
		if err != nil {
			t.Fatalf("JWT part %d: %v", i, err)
		}
	}
	return header, claims
}

// signedToken is an hour's token of sa for audiences, signed by key as
// issuer with kube's own generator and claims.
func signedToken(t *testing.T, key crypto.Signer, issuer string, sa *corev1.ServiceAccount, audiences []string) string {
	t.Helper()
	generator, err := serviceaccount.JWTTokenGenerator(issuer, key)
	if err != nil {
		t.Fatal(err)
	}
	account := api.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa.Name, Namespace: sa.Namespace, UID: sa.UID}}
	public, private, err := serviceaccount.Claims(account, nil, nil, nil, nil, nil, 3600, 0, audiences, nil)
	if err != nil {
		t.Fatal(err)
	}
	token, err := generator.GenerateToken(ctx, public, private)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// TestUnauthenticated: a wrong token gets kube-apiserver's 401 Status;
// without credentials RBAC decides for system:anonymous, as
// kube-apiserver's default is, and with --anonymous-auth=false (or
// AlwaysAllow) every request without them is refused, health and version
// too, as kube-apiserver refuses them.
func TestUnauthenticated(t *testing.T) {
	k := startKapiWithTokens(t, onlyLifecycleControllers)
	_, err := k.clientWithToken("wrong").CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Errorf("a wrong token: %v", err)
	}
	anonymous := func(k *kapi, path string) (int, string) {
		cfg := rest.AnonymousClientConfig(k.config)
		rt, err := rest.TransportFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := (&http.Client{Transport: rt}).Get(k.config.Host + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := anonymous(k, "/readyz"); code != 200 {
		t.Errorf("GET /readyz as system:anonymous: %d %s", code, body)
	}
	if code, body := anonymous(k, "/api"); code != 403 || !strings.Contains(body, `forbidden: User \"system:anonymous\" cannot get path \"/api\"`) {
		t.Errorf("GET /api as system:anonymous: %d %s", code, body)
	}
	// A group's path is not a resource: the refusal names no group.
	if code, body := anonymous(k, "/apis/apps/v1"); code != 403 || !strings.Contains(body, `"message":"forbidden: User \"system:anonymous\" cannot get path \"/apis/apps/v1\"","reason":"Forbidden","details":{}`) {
		t.Errorf("GET /apis/apps/v1 as system:anonymous: %d %s", code, body)
	}
	code, body := anonymous(k, "/api/v1/namespaces")
	if code != 403 || !strings.Contains(body, `User \"system:anonymous\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope`) {
		t.Errorf("GET /api/v1/namespaces as system:anonymous: %d %s", code, body)
	}
	// Anonymous requests are never allowed with AlwaysAllow, as in
	// kube-apiserver: they would be allowed everything. Without them,
	// health and version need credentials too, as kube-apiserver's.
	for _, flag := range []string{"--anonymous-auth=false", "--authorization-mode=AlwaysAllow"} {
		k2 := startKapi(t, onlyLifecycleControllers, flag)
		for path, want := range map[string]int{"/healthz": 401, "/version": 401, "/api": 401, "/api/v1/namespaces": 401} {
			if code, body := anonymous(k2, path); code != want {
				t.Errorf("%s: GET %s without credentials: %d %s, want %d", flag, path, code, body, want)
			}
		}
	}
}

// TestRoleEscalation: a user who may write roles and bindings cannot grant
// what it does not hold, with kube-apiserver's message, unless it may
// escalate or bind.
func TestRoleEscalation(t *testing.T) {
	k := startKapiWithTokens(t, onlyLifecycleControllers)
	k.mustKubectl("create", "role", "rbac-writer", "--verb=create,update,get", "--resource=roles,rolebindings")
	k.mustKubectl("create", "rolebinding", "eddie-rbac", "--role=rbac-writer", "--user=eddie")
	eddie := k.clientWithToken("editor-token")
	podReader := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"},
	}}}
	waitFor(t, 10*time.Second, "eddie's role", func() bool {
		_, err := eddie.RbacV1().Roles("default").Get(ctx, "rbac-writer", metav1.GetOptions{})
		return err == nil
	})
	_, err := eddie.RbacV1().Roles("default").Create(ctx, podReader, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `user "eddie" (groups=["editors" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:`) {
		t.Errorf("an escalating role: %v", err)
	}
	// An update that escalates is refused before its resourceVersion is
	// compared, as kube's RBAC storage checks the updated object first.
	stale, err := eddie.RbacV1().Roles("default").Get(ctx, "rbac-writer", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale.ResourceVersion = "1"
	stale.Rules = append(stale.Rules, podReader.Rules...)
	if _, err := eddie.RbacV1().Roles("default").Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("an escalating update at a stale version: %v", err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "self-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "eddie"}},
	}
	if _, err := eddie.RbacV1().RoleBindings("default").Create(ctx, binding, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("an escalating binding: %v", err)
	}
	missing := binding.DeepCopy()
	missing.Name, missing.RoleRef = "missing-role", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "missing"}
	_, err = eddie.RbacV1().RoleBindings("default").Create(ctx, missing, metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `rolebindings.rbac.authorization.k8s.io "missing" not found` {
		t.Errorf("a binding to a missing role: %v", err)
	}
	// A cluster binding naming a Role, which has no namespace there: the
	// Role's storage refuses the lookup.
	k.mustKubectl("create", "clusterrole", "crb-writer", "--verb=create", "--resource=clusterrolebindings")
	k.mustKubectl("create", "clusterrolebinding", "eddie-crb", "--clusterrole=crb-writer", "--user=eddie")
	waitFor(t, 10*time.Second, "eddie to write cluster bindings", func() bool {
		_, err := eddie.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return !apierrors.IsForbidden(err)
	})
	_, err = eddie.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "to-a-role"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "rbac-writer"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "eddie"}},
	}, metav1.CreateOptions{})
	if !apierrors.IsBadRequest(err) || err.Error() != "Namespace parameter required." {
		t.Errorf("a cluster binding to a Role: %v, want kube's 400", err)
	}
	// A rule granted a moment ago is held: the checks read the newest
	// roles and bindings, not the authorizer's informers.
	for i := range 10 {
		granted := podReader.DeepCopy()
		granted.Name, granted.Rules[0].ResourceNames = fmt.Sprintf("granted-%d", i), []string{fmt.Sprintf("pod-%d", i)}
		if _, err := k.clientset().RbacV1().Roles("default").Create(ctx, granted, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		grant := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: granted.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: granted.Name},
			Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "eddie"}},
		}
		if _, err := k.clientset().RbacV1().RoleBindings("default").Create(ctx, grant, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		granted.Name += "-copy"
		granted.ResourceVersion = ""
		if _, err := eddie.RbacV1().Roles("default").Create(ctx, granted, metav1.CreateOptions{}); err != nil {
			t.Errorf("a copy of a role just granted: %v", err)
		}
	}
	k.mustKubectl("create", "clusterrole", "admin-binder", "--verb=bind", "--resource=clusterroles", "--resource-name=admin")
	k.mustKubectl("create", "rolebinding", "eddie-binds", "--clusterrole=admin-binder", "--user=eddie")
	waitFor(t, 10*time.Second, "eddie to bind admin", func() bool {
		_, err := eddie.RbacV1().RoleBindings("default").Create(ctx, binding, metav1.CreateOptions{})
		return err == nil
	})
}

// TestAuditLog: with a policy, every request it selects is written as one
// audit.k8s.io/v1 event line at the level the policy gives, with the
// request and response objects at RequestResponse, and requests that fail
// authentication too.
func TestAuditLog(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := writeFile(policy, `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  userGroups: ["system:serviceaccounts:kube-system"]
- level: None
  users: ["system:apiserver", "system:kube-controller-manager"]
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*"]
- level: RequestResponse
  omitManagedFields: true
  resources:
  - {group: "", resources: ["configmaps", "namespaces"]}
  - {group: "apps", resources: ["deployments/scale"]}
  - {group: "example.com", resources: ["widgets"]}
- level: Metadata
`); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "audit.log")
	k := startKapi(t, onlyLifecycleControllers, "--audit-policy-file", policy, "--audit-log-path", logPath)
	k.mustKubectl("create", "configmap", "audited", "--from-literal=a=b")
	k.mustKubectl("get", "secrets")
	k.mustKubectl("get", "configmaps") // a Table
	k.mustKubectl("get", "configmap", "audited", "-o", "json")
	if _, err := k.clientset().CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := k.clientset().CoreV1().ConfigMaps("default").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "absent!=x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.clientWithToken("wrong").CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("a wrong token: %v", err)
	}
	k.mustKubectl("create", "namespace", "audited")
	// A watch of one object by name: its name is the request's.
	one := int64(1)
	byName, err := k.clientset().CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=audited", TimeoutSeconds: &one})
	if err != nil {
		t.Fatal(err)
	}
	for range byName.ResultChan() {
	}
	waitFor(t, 10*time.Second, "the default service account", func() bool {
		_, err := k.clientset().CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
	k.mustKubectl("create", "token", "default")
	// An apply in YAML is recorded as JSON (an event that could not be
	// encoded went missing), a Scale written through its sub-resource as
	// the Scale, and a list of custom resources as their list.
	err = k.clientset().CoreV1().RESTClient().Patch(types.ApplyYAMLPatchType).Namespace("default").Resource("configmaps").Name("applied").
		Param("fieldManager", "yaml").Body([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: applied}\ndata: {a: b}\n")).Do(ctx).Error()
	if err != nil {
		t.Fatal(err)
	}
	k.mustKubectl("create", "deployment", "scaled", "--image=x")
	scale, err := k.clientset().AppsV1().Deployments("default").GetScale(ctx, "scaled", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 2
	if _, err := k.clientset().AppsV1().Deployments("default").UpdateScale(ctx, "scaled", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	createCRD(t, k, widgetsCRD, "widgets.example.com")
	k.mustKubectl("create", "-f", writeTemp(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: audited}\nspec: {color: red}\n"))
	if _, err := dynamicClient(t, k).Resource(widgets).Namespace("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}

	type event struct {
		Level, Verb, Stage, RequestURI string
		User                           struct{ Username string }
		ObjectRef                      *struct{ Resource, Namespace, Name, Subresource string }
		ResponseStatus                 struct{ Code int }
		RequestObject, ResponseObject  map[string]any
		Annotations                    map[string]string
	}
	// A list's answer at RequestResponse is the list (or the Table it
	// was asked as), and a deletecollection's the list of what it deleted.
	holdsAudited := func(e event, items, path string) bool {
		list, _ := e.ResponseObject[items].([]any)
		for _, item := range list {
			if name, _, _ := unstructured.NestedString(item.(map[string]any), strings.Split(path, ".")...); name == "audited" {
				return true
			}
		}
		return false
	}
	// check names each event it expects and tells what is wrong with it.
	check := func(e event) (name string, ok bool) {
		configMaps := e.ObjectRef != nil && e.ObjectRef.Resource == "configmaps"
		switch {
		case e.Verb == "patch" && configMaps && e.ObjectRef.Name == "applied":
			return "yaml apply", e.Level == "RequestResponse" && e.ResponseStatus.Code == 201 &&
				e.RequestObject["kind"] == "ConfigMap" && e.ResponseObject["kind"] == "ConfigMap"
		case e.Verb == "update" && e.ObjectRef != nil && e.ObjectRef.Resource == "deployments" && e.ObjectRef.Subresource == "scale":
			return "scale update", e.Level == "RequestResponse" && e.RequestObject["kind"] == "Scale" && e.ResponseObject["kind"] == "Scale"
		case e.Verb == "list" && e.ObjectRef != nil && e.ObjectRef.Resource == "widgets" && e.ResponseObject["kind"] != "Table":
			return "custom resource list", e.Level == "RequestResponse" && e.ResponseObject["kind"] == "WidgetList" && holdsAudited(e, "items", "metadata.name")
		case e.Verb == "create" && configMaps:
			// kube-apiserver's authorisation filter notes its decision.
			return "create", e.Level == "RequestResponse" && e.User.Username == "kapi-admin" && e.ResponseStatus.Code == 201 &&
				e.ObjectRef.Name == "audited" && e.RequestObject["kind"] == "ConfigMap" && e.ResponseObject["kind"] == "ConfigMap" &&
				e.Annotations["authorization.k8s.io/decision"] == "allow"
		case e.Verb == "create" && e.ObjectRef != nil && e.ObjectRef.Resource == "namespaces":
			// The body is recorded as decoded: with its defaults.
			label, _, _ := unstructured.NestedString(e.RequestObject, "metadata", "labels", "kubernetes.io/metadata.name")
			phase, _, _ := unstructured.NestedString(e.RequestObject, "status", "phase")
			return "namespace create", e.Level == "RequestResponse" && label == "audited" && phase == "Active"
		case e.ObjectRef != nil && e.ObjectRef.Resource == "serviceaccounts" && e.ObjectRef.Subresource == "token":
			// The token's ID, which its use is audited with too.
			return "token request", strings.HasPrefix(e.Annotations["authentication.kubernetes.io/issued-credential-id"], "JTI=")
		case e.Verb == "watch" && configMaps:
			return "watch by name", e.ObjectRef.Name == "audited" && e.ResponseObject == nil
		case e.Verb == "get" && configMaps:
			return "get", e.Level == "RequestResponse" && e.ResponseObject["kind"] == "ConfigMap" &&
				!strings.Contains(fmt.Sprint(e.ResponseObject), "managedFields")
		case e.Verb == "list" && e.ObjectRef != nil && e.ObjectRef.Resource == "secrets":
			return "secrets list", e.Level == "Metadata" && e.ResponseStatus.Code == 200 && e.RequestObject == nil && e.ResponseObject == nil
		case e.Verb == "list" && configMaps && e.ResponseObject["kind"] == "Table":
			// Without managed fields, as the rule asks, in its rows too.
			return "table", e.Level == "RequestResponse" && holdsAudited(e, "rows", "object.metadata.name") &&
				!strings.Contains(fmt.Sprint(e.ResponseObject), "managedFields")
		case e.Verb == "list" && configMaps:
			return "list", e.Level == "RequestResponse" && e.ResponseObject["kind"] == "ConfigMapList" && holdsAudited(e, "items", "metadata.name")
		case e.Verb == "deletecollection" && configMaps:
			return "deletecollection", e.Level == "RequestResponse" && e.ResponseStatus.Code == 200 &&
				// The options as kube-apiserver's decoder gives them.
				e.RequestObject["kind"] == "DeleteOptions" && e.RequestObject["apiVersion"] == "meta.k8s.io/__internal" &&
				e.ResponseObject["kind"] == "ConfigMapList" && holdsAudited(e, "items", "metadata.name")
		case e.ResponseStatus.Code == 401:
			return "unauthorized", true
		case e.User.Username == "system:apiserver" || strings.HasPrefix(e.User.Username, "system:serviceaccount:kube-system:"):
			return "excluded", false
		}
		return "", true
	}
	expected := []string{"create", "get", "secrets list", "table", "list", "deletecollection", "unauthorized", "namespace create", "watch by name", "token request",
		"yaml apply", "scale update", "custom resource list"}
	var events []event
	seen := map[string]bool{}
	waitFor(t, 10*time.Second, "the audit events", func() bool {
		data, _ := os.ReadFile(logPath)
		events, seen = nil, map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var e event
			if line == "" {
				continue
			}
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("an audit line that is not an event: %v\n%s", err, line)
			}
			events = append(events, e)
			if name, _ := check(e); name != "" {
				seen[name] = true
			}
		}
		return len(seen) >= len(expected)
	})
	for _, e := range events {
		if name, ok := check(e); !ok {
			t.Errorf("the %s event: %+v", name, e)
		}
	}
	for _, name := range expected {
		if !seen[name] {
			t.Errorf("no %s event; all: %+v", name, events)
		}
	}
}

// TestPolicyAuditAnnotations: a ValidatingAdmissionPolicy binding with the
// Audit action lets a failing request through and records the failure,
// and the policy's audit annotations, in the request's audit event.
func TestPolicyAuditAnnotations(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := writeFile(policy, `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  resources: [{group: apps, resources: [deployments]}]
- level: None
`); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "audit.log")
	k := startKapi(t, onlyLifecycleControllers, "--audit-policy-file", policy, "--audit-log-path", logPath)
	apply(t, k, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas-audit}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"]}
  validations:
  - {expression: "object.spec.replicas <= 2", message: "too many replicas"}
  auditAnnotations:
  - {key: replicas, valueExpression: "string(object.spec.replicas)"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replicas-audit}
spec: {policyName: replicas-audit, validationActions: [Audit]}
`)
	var annotations map[string]string
	waitFor(t, 20*time.Second, "the policy's audit annotations", func() bool {
		name := fmt.Sprintf("d%d", time.Now().UnixNano())
		k.mustKubectl("create", "deployment", name, "--image=x", "--replicas=5")
		time.Sleep(200 * time.Millisecond)
		data, _ := os.ReadFile(logPath)
		for _, line := range strings.Split(string(data), "\n") {
			var e struct {
				Verb        string
				ObjectRef   *struct{ Name string }
				Annotations map[string]string
			}
			if json.Unmarshal([]byte(line), &e) != nil || e.Verb != "create" || e.ObjectRef == nil || e.ObjectRef.Name != name {
				continue
			}
			annotations = e.Annotations
			return annotations["replicas-audit/replicas"] == "5"
		}
		return false
	})
	if !strings.Contains(annotations["validation.policy.admission.k8s.io/validation_failure"], "too many replicas") {
		t.Errorf("the audit event's annotations: %v", annotations)
	}
}

// TestReviewsAnswerAsKube: TokenReviews and access reviews say what
// kube-apiserver's say: a static token is good for the API's audience, a
// service account token for another audience is refused in the words of
// both of kube's bearer token authenticators, and RBAC's reasons begin
// with its name.
func TestReviewsAnswerAsKube(t *testing.T) {
	k := startKapiWithTokens(t, onlyLifecycleControllers)
	reviews := k.clientset().AuthenticationV1().TokenReviews()
	static, err := reviews.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "nobody-token"}}, metav1.CreateOptions{})
	if err != nil || !static.Status.Authenticated || static.Status.User.Username != "nobody" || len(static.Status.Audiences) != 1 {
		t.Errorf("a TokenReview of a static token: %+v, %v", static.Status, err)
	}
	// The metadata only the server sets is cleared from a review's body,
	// as from any created body: not refused, not sent back.
	stamped := metav1.ObjectMeta{UID: "00000000-0000-0000-0000-0000000000cc", CreationTimestamp: metav1.Now()}
	echoed, err := reviews.Create(ctx, &authenticationv1.TokenReview{ObjectMeta: stamped, Spec: authenticationv1.TokenReviewSpec{Token: "nobody-token"}}, metav1.CreateOptions{})
	if err != nil || echoed.UID != "" || !echoed.CreationTimestamp.IsZero() {
		t.Errorf("a TokenReview with a uid and a creation time: %+v, %v", echoed.ObjectMeta, err)
	}
	self, err := k.clientset().AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{ObjectMeta: stamped,
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods"}}}, metav1.CreateOptions{})
	if err != nil || !self.Status.Allowed {
		t.Errorf("a SelfSubjectAccessReview with a uid and a creation time: %+v, %v", self, err)
	}
	k.mustKubectl("create", "serviceaccount", "robot")
	token := strings.TrimSpace(k.mustKubectl("create", "token", "robot", "--audience=elsewhere"))
	other, err := reviews.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil || other.Status.Authenticated || !strings.HasPrefix(other.Status.Error, `[invalid bearer token, token audiences ["elsewhere"] is invalid for the target audiences`) {
		t.Errorf("a TokenReview of a token for another audience: %+v, %v", other.Status, err)
	}
	k.mustKubectl("create", "rolebinding", "dangling", "--role=nosuchrole", "--user=nobody")
	waitFor(t, 10*time.Second, "a review of a user bound to a missing role to say so", func() bool {
		sar, err := k.clientset().AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "nobody", ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods", Namespace: "default"},
		}}, metav1.CreateOptions{})
		if err != nil || sar.Status.Allowed {
			t.Fatalf("the review: %+v, %v", sar.Status, err)
		}
		return strings.HasPrefix(sar.Status.Reason, `rbac: RBAC: role.rbac.authorization.k8s.io "nosuchrole" not found`)
	})
}

// TestTokenPlaces: a browser's websocket presents its bearer token as a
// subprotocol, which authenticates as the header does; an Authorization
// header that holds no bearer token is taken as no credentials (the
// public paths answer), as kube-apiserver takes it.
func TestTokenPlaces(t *testing.T) {
	k := startKapiWithTokens(t, onlyLifecycleControllers)
	k.mustKubectl("create", "serviceaccount", "robot")
	token := strings.TrimSpace(k.mustKubectl("create", "token", "robot"))
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	do := func(path string, header http.Header) (int, string) {
		req, err := http.NewRequest(http.MethodGet, k.config.Host+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = header
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	websocketHeader := http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Version": {"13"}, "Sec-Websocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="},
		"Sec-Websocket-Protocol": {"base64url.bearer.authorization.k8s.io." + base64.RawURLEncoding.EncodeToString([]byte(token)) + ", v4.channel.k8s.io"}}
	if code, body := do("/api/v1/namespaces/default/pods?watch=1", websocketHeader); code != http.StatusForbidden ||
		!strings.Contains(body, `User \"system:serviceaccount:default:robot\" cannot watch resource \"pods\"`) {
		t.Errorf("a websocket with its token as a subprotocol: %d %s", code, body)
	}
	for _, value := range []string{"Bearer", "Basic dXNlcjpwYXNz"} {
		if code, body := do("/healthz", http.Header{"Authorization": {value}}); code != http.StatusOK {
			t.Errorf("/healthz with Authorization %q: %d %s", value, code, body)
		}
	}
	if code, _ := do("/healthz", http.Header{"Authorization": {"Bearer not-a-token"}}); code != http.StatusUnauthorized {
		t.Errorf("/healthz with a bearer token that is none: %d, want 401", code)
	}
	if resp, body := rawDo(t, k, http.MethodGet, "/openid/v1/jwks", "", "application/json", nil); resp.StatusCode != http.StatusNotAcceptable || !strings.Contains(string(body), `"reason":"NotAcceptable"`) {
		t.Errorf("the key set asked for as JSON: %d %s, want kube's Status", resp.StatusCode, body)
	}
	_, err := k.clientset().CoreV1().ServiceAccounts("default").CreateToken(ctx, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1"},
	}}, metav1.CreateOptions{})
	if !apierrors.IsBadRequest(err) || err.Error() != "Name parameter required." {
		t.Errorf("a token bound to a pod without a name: %v", err)
	}
}

// TestLegacyServiceAccountTokens: a Secret of type
// kubernetes.io/service-account-token gets a long-lived token of its
// service account, the CA and the namespace, as kube-controller-manager's
// tokens controller fills it; the token authenticates while the Secret
// holds it and the service account exists, and each day it is used the
// Secret is labelled with the date, as kube-apiserver labels it.
func TestLegacyServiceAccountTokens(t *testing.T) {
	k := startKapi(t, onlyLifecycleControllers+",serviceaccount-token-controller")
	k.mustKubectl("create", "serviceaccount", "build-robot")
	createTokenSecret(t, k, "build-robot-secret", "build-robot")
	secrets := k.clientset().CoreV1().Secrets("default")
	var secret *corev1.Secret
	waitFor(t, 10*time.Second, "the Secret's token", func() bool {
		var err error
		secret, err = secrets.Get(ctx, "build-robot-secret", metav1.GetOptions{})
		return err == nil && len(secret.Data["token"]) > 0
	})
	if string(secret.Data["namespace"]) != "default" || !strings.Contains(string(secret.Data["ca.crt"]), "BEGIN CERTIFICATE") {
		t.Errorf("the Secret holds namespace %q and ca.crt %q", secret.Data["namespace"], secret.Data["ca.crt"])
	}
	sa, err := k.clientset().CoreV1().ServiceAccounts("default").Get(ctx, "build-robot", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if uid := secret.Annotations["kubernetes.io/service-account.uid"]; uid != string(sa.UID) {
		t.Errorf("the Secret names service account UID %q, the service account's is %q", uid, sa.UID)
	}
	token := string(secret.Data["token"])

	robot := k.clientWithToken(token)
	review, err := robot.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if info := review.Status.UserInfo; info.Username != "system:serviceaccount:default:build-robot" || info.UID != string(sa.UID) {
		t.Errorf("the Secret's token authenticates as %+v", info)
	}
	secret, err = secrets.Get(ctx, "build-robot-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if used, today := secret.Labels["kubernetes.io/legacy-token-last-used"], time.Now().UTC().Format("2006-01-02"); used != today && used != time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02") {
		t.Errorf("the used token's Secret is labelled last used %q", used)
	}
	tr, err := k.clientset().AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token},
	}, metav1.CreateOptions{})
	if err != nil || !tr.Status.Authenticated || tr.Status.User.Username != "system:serviceaccount:default:build-robot" {
		t.Errorf("a TokenReview of the Secret's token: %+v, %v", tr.Status, err)
	}
	tracking, err := k.clientset().CoreV1().ConfigMaps("kube-system").Get(ctx, "kube-apiserver-legacy-service-account-token-tracking", metav1.GetOptions{})
	if err != nil || tracking.Data["since"] == "" {
		t.Errorf("kube-apiserver's legacy token tracking ConfigMap: %v, %v", tracking.Data, err)
	}

	// A token no longer in its Secret does not authenticate.
	k.mustKubectl("delete", "secret", "build-robot-secret")
	waitFor(t, 15*time.Second, "the deleted Secret's token to stop working", func() bool {
		_, err := robot.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		return apierrors.IsUnauthorized(err)
	})

	// A service account's deletion takes its token Secrets with it.
	createTokenSecret(t, k, "build-robot-secret-2", "build-robot")
	waitFor(t, 10*time.Second, "the second Secret's token", func() bool {
		s, err := secrets.Get(ctx, "build-robot-secret-2", metav1.GetOptions{})
		return err == nil && len(s.Data["token"]) > 0
	})
	k.mustKubectl("delete", "serviceaccount", "build-robot")
	waitFor(t, 10*time.Second, "the service account's token Secret to go", func() bool {
		_, err := secrets.Get(ctx, "build-robot-secret-2", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

// createTokenSecret creates in default a Secret of type
// kubernetes.io/service-account-token for the service account named, as
// Kubernetes' documentation shows for a long-lived token.
func createTokenSecret(t *testing.T, k *kapi, name, serviceAccount string) {
	t.Helper()
	_, err := k.clientset().CoreV1().Secrets("default").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"kubernetes.io/service-account.name": serviceAccount}},
		Type:       corev1.SecretTypeServiceAccountToken,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNodeAuthorizer: with --authorization-mode=Node,RBAC a kubelet's
// identity (system:node:NAME in system:nodes) reads its own Node and the
// secrets of pods bound to it, and nothing else of the kind, with kube's
// node authorizer's reasons; its rules cannot be listed.
func TestNodeAuthorizer(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := writeFile(tokens, "kubelet-token,system:node:n1,uid-n1,system:nodes\n"); err != nil {
		t.Fatal(err)
	}
	k := startKapi(t, onlyLifecycleControllers, "--token-auth-file", tokens, "--authorization-mode=Node,RBAC")
	admin := k.clientset()
	for _, name := range []string{"n1", "n2"} {
		if _, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"used", "unused"} {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := admin.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "on-n1"}, Spec: corev1.PodSpec{
		NodeName:   "n1",
		Containers: []corev1.Container{{Name: "c", Image: "x"}},
		Volumes:    []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "used"}}}},
	}}
	if _, err := admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubelet := k.clientWithToken("kubelet-token")
	waitFor(t, 20*time.Second, "the kubelet to read its pod's secret", func() bool {
		_, err := kubelet.CoreV1().Secrets("default").Get(ctx, "used", metav1.GetOptions{})
		return err == nil
	})
	if _, err := kubelet.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{}); err != nil {
		t.Errorf("the kubelet reading its own node: %v", err)
	}
	_, err := kubelet.CoreV1().Secrets("default").Get(ctx, "unused", metav1.GetOptions{})
	if !apierrors.IsForbidden(err) || !strings.HasSuffix(err.Error(), `: node: no relationship found between node 'n1' and this object`) {
		t.Errorf("the kubelet reading a secret no pod of its node uses: %v", err)
	}
	_, err = kubelet.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "node: node 'n1' cannot read all nodes, only its own Node object") {
		t.Errorf("the kubelet listing nodes: %v", err)
	}
	review, err := kubelet.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
		Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "default"}}, metav1.CreateOptions{})
	if err != nil || !review.Status.Incomplete || !strings.Contains(review.Status.EvaluationError, "node authorizer does not support user rule resolution") {
		t.Errorf("the kubelet's rules review: %+v %v", review.Status, err)
	}
}

// TestOptionalAdmissionPlugins: --enable-admission-plugins runs kube's
// plugins a default kube-apiserver leaves off. NodeRestriction keeps a
// kubelet to its own Node, Lease and mirror pods, with kube's messages;
// AlwaysPullImages and DenyServiceExternalIPs act on everyone's writes.
// A plugin kapi does not know stops the start.
func TestOptionalAdmissionPlugins(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := writeFile(tokens, "kubelet-token,system:node:n1,uid-n1,system:nodes\n"); err != nil {
		t.Fatal(err)
	}
	k := startKapi(t, onlyLifecycleControllers, "--token-auth-file", tokens, "--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction,AlwaysPullImages,DenyServiceExternalIPs")
	admin := k.clientset()
	kubelet := k.clientWithToken("kubelet-token")
	if _, err := kubelet.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the kubelet registering its node: %v", err)
	}
	_, err := kubelet.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `node "n1" is not allowed to modify node "n2"`) {
		t.Errorf("the kubelet registering another node: %v", err)
	}
	labelled := []byte(`{"metadata":{"labels":{"node-restriction.kubernetes.io/pool":"a"}}}`)
	_, err = kubelet.CoreV1().Nodes().Patch(ctx, "n1", types.MergePatchType, labelled, metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "is not allowed to modify labels: node-restriction.kubernetes.io/pool") {
		t.Errorf("the kubelet labelling its node with a restricted label: %v", err)
	}
	lease := func(name string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &name}}
	}
	if _, err := kubelet.CoordinationV1().Leases("kube-node-lease").Create(ctx, lease("n1"), metav1.CreateOptions{}); err != nil {
		t.Errorf("the kubelet creating its lease: %v", err)
	}
	_, err = kubelet.CoordinationV1().Leases("kube-node-lease").Create(ctx, lease("n2"), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "can only access node lease with the same name as the requesting node") {
		t.Errorf("the kubelet creating another node's lease: %v", err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
		NodeName:   "n1",
		Containers: []corev1.Container{{Name: "c", Image: "nginx", ImagePullPolicy: corev1.PullIfNotPresent}},
	}}
	_, err = kubelet.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `node "n1" can only create mirror pods`) {
		t.Errorf("the kubelet creating a pod that is not a mirror pod: %v", err)
	}
	waitFor(t, 10*time.Second, "the default service account", func() bool {
		_, err := admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
	created, err := admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil || created.Spec.Containers[0].ImagePullPolicy != corev1.PullAlways {
		t.Errorf("AlwaysPullImages: a pod asking IfNotPresent: %v %v", err, created)
	}
	service := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Port: 80}}, ExternalIPs: []string{"192.0.2.1"},
	}}
	_, err = admin.CoreV1().Services("default").Create(ctx, service, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "Use of external IPs is denied by admission control") {
		t.Errorf("DenyServiceExternalIPs: a service with an external IP: %v", err)
	}

	for plugin, want := range map[string]string{
		// The log quotes the error's quotes.
		"NoSuchPlugin":       `enable-admission-plugins plugin \"NoSuchPlugin\" is unknown`,
		"ImagePolicyWebhook": `enable-admission-plugins plugin \"ImagePolicyWebhook\" is not offered by kapi`,
	} {
		out, err := exec.Command(kapiBinary, "serve", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--enable-admission-plugins", plugin).CombinedOutput()
		if err == nil || !strings.Contains(string(out), want) {
			t.Errorf("kapi serve --enable-admission-plugins %s: %v\n%s", plugin, err, out)
		}
	}
}

// TestValidationAsksTheAuthorizer: the checks kube's strategies make of
// what the requester may do are made against the server's authorizer: a
// policy whose parameters its author may not read, and a claim's
// allocation written without resourceclaims/binding, are refused with
// kube-apiserver's 422 until RBAC grants what they need.
func TestValidationAsksTheAuthorizer(t *testing.T) {
	k := startKapiWithTokens(t, onlyLifecycleControllers)
	k.mustKubectl("create", "clusterrole", "policy-writer", "--verb=create,get",
		"--resource=validatingadmissionpolicies.admissionregistration.k8s.io")
	k.mustKubectl("create", "clusterrolebinding", "eddie-policies", "--clusterrole=policy-writer", "--user=eddie")
	k.mustKubectl("create", "role", "claim-writer", "--verb=create,get,patch", "--resource=resourceclaims.resource.k8s.io,resourceclaims.resource.k8s.io/status")
	k.mustKubectl("create", "rolebinding", "eddie-claims", "--role=claim-writer", "--user=eddie")
	eddie := k.clientWithToken("editor-token")

	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "secret-params"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "Secret"},
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "true"}},
		},
	}
	waitFor(t, 10*time.Second, "eddie's roles", func() bool {
		_, err := eddie.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{})
		return apierrors.IsInvalid(err)
	})
	_, err := eddie.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(),
		`spec.paramKind: Forbidden: user &{eddie uid-1 [editors system:authenticated] map[]} must have "get" permission on all objects of the referenced paramKind (kind=Secret, apiVersion=v1)`) {
		t.Errorf("a policy whose parameters its author may not read: %v", err)
	}
	k.mustKubectl("create", "clusterrole", "secret-reader", "--verb=get,list,watch", "--resource=secrets")
	k.mustKubectl("create", "clusterrolebinding", "eddie-secrets", "--clusterrole=secret-reader", "--user=eddie")
	waitFor(t, 10*time.Second, "the policy to be allowed once eddie may read Secrets", func() bool {
		_, err := eddie.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{})
		return err == nil
	})

	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "claim"},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "r", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu"},
		}}}},
	}
	if _, err := eddie.ResourceV1().ResourceClaims("default").Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	allocation := []byte(`{"status":{"allocation":{"devices":{"results":[{"request":"r","driver":"example.com","pool":"p","device":"d0"}]}}}}`)
	_, err = eddie.ResourceV1().ResourceClaims("default").Patch(ctx, "claim", types.MergePatchType, allocation, metav1.PatchOptions{}, "status")
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(),
		`status.allocation: Forbidden: changing status.allocation or status.reservedFor requires resource="resourceclaims/binding", verb="patch" permission`) {
		t.Errorf("a claim's allocation written without resourceclaims/binding: %v", err)
	}
}
