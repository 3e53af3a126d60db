package printers

import (
	"reflect"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kapi-dev/kapi/internal/resources"
)

// now is when the test objects are aged from: kube's printers age objects
// by the real clock.
var now = time.Now()

// ago is the time d before now.
func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func agoPtr(d time.Duration) *metav1.Time { t := ago(d); return &t }

func ptr[T any](v T) *T { return &v }

// meta is an object's metadata, created 10 minutes ago.
func objMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: ago(10 * time.Minute)}
}

func gr(group, resource string) schema.GroupResource {
	return schema.GroupResource{Group: group, Resource: resource}
}

// columnNames are the names of the columns as kubectl prints them, with
// priority 1 (wide) columns marked by a trailing "*".
func columnNames(p *Printer) []string {
	var names []string
	for _, c := range p.Columns {
		n := strings.ToUpper(c.Name)
		if c.Priority != 0 {
			n += "*"
		}
		names = append(names, n)
	}
	return names
}

func TestColumns(t *testing.T) {
	cases := []struct {
		gr   schema.GroupResource
		want string
	}{
		{gr("", "pods"), "NAME READY STATUS RESTARTS AGE IP* NODE* NOMINATED NODE* READINESS GATES*"},
		{gr("apps", "deployments"), "NAME READY UP-TO-DATE AVAILABLE AGE CONTAINERS* IMAGES* SELECTOR*"},
		{gr("apps", "replicasets"), "NAME DESIRED CURRENT READY AGE CONTAINERS* IMAGES* SELECTOR*"},
		{gr("apps", "statefulsets"), "NAME READY AGE CONTAINERS* IMAGES*"},
		{gr("apps", "daemonsets"), "NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE CONTAINERS* IMAGES* SELECTOR*"},
		{gr("apps", "controllerrevisions"), "NAME CONTROLLER REVISION AGE"},
		{gr("", "replicationcontrollers"), "NAME DESIRED CURRENT READY AGE CONTAINERS* IMAGES* SELECTOR*"},
		{gr("", "services"), "NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE SELECTOR*"},
		{gr("", "endpoints"), "NAME ENDPOINTS AGE"},
		{gr("", "nodes"), "NAME STATUS ROLES AGE VERSION INTERNAL-IP* EXTERNAL-IP* OS-IMAGE* KERNEL-VERSION* CONTAINER-RUNTIME*"},
		{gr("", "namespaces"), "NAME STATUS AGE"},
		{gr("", "configmaps"), "NAME DATA AGE"},
		{gr("", "secrets"), "NAME TYPE DATA AGE"},
		{gr("", "serviceaccounts"), "NAME AGE"},
		{gr("", "events"), "LAST SEEN TYPE REASON OBJECT SUBOBJECT* SOURCE* MESSAGE FIRST SEEN* COUNT* NAME*"},
		{gr("events.k8s.io", "events"), "LAST SEEN TYPE REASON OBJECT SUBOBJECT* SOURCE* MESSAGE FIRST SEEN* COUNT* NAME*"},
		{gr("batch", "jobs"), "NAME STATUS COMPLETIONS DURATION AGE CONTAINERS* IMAGES* SELECTOR*"},
		{gr("batch", "cronjobs"), "NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE CONTAINERS* IMAGES* SELECTOR*"},
		{gr("", "persistentvolumes"), "NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS REASON AGE VOLUMEMODE*"},
		{gr("", "persistentvolumeclaims"), "NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE VOLUMEMODE*"},
		{gr("storage.k8s.io", "storageclasses"), "NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE"},
		{gr("networking.k8s.io", "ingresses"), "NAME CLASS HOSTS ADDRESS PORTS AGE"},
		{gr("networking.k8s.io", "ingressclasses"), "NAME CONTROLLER PARAMETERS AGE"},
		{gr("networking.k8s.io", "networkpolicies"), "NAME POD-SELECTOR AGE"},
		{gr("rbac.authorization.k8s.io", "roles"), "NAME CREATED AT"},
		{gr("rbac.authorization.k8s.io", "clusterroles"), "NAME CREATED AT"},
		{gr("rbac.authorization.k8s.io", "rolebindings"), "NAME ROLE AGE USERS* GROUPS* SERVICEACCOUNTS*"},
		{gr("rbac.authorization.k8s.io", "clusterrolebindings"), "NAME ROLE AGE USERS* GROUPS* SERVICEACCOUNTS*"},
		{gr("coordination.k8s.io", "leases"), "NAME HOLDER AGE"},
		{gr("autoscaling", "horizontalpodautoscalers"), "NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE"},
		{gr("policy", "poddisruptionbudgets"), "NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE"},
		{gr("scheduling.k8s.io", "priorityclasses"), "NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY"},
		{gr("", "limitranges"), "NAME CREATED AT"},
		{gr("", "resourcequotas"), "NAME REQUEST LIMIT AGE"},
		{gr("discovery.k8s.io", "endpointslices"), "NAME ADDRESSTYPE PORTS ENDPOINTS AGE"},
		{gr("storage.k8s.io", "csidrivers"), "NAME ATTACHREQUIRED PODINFOONMOUNT STORAGECAPACITY TOKENREQUESTS REQUIRESREPUBLISH MODES AGE"},
		{gr("storage.k8s.io", "csinodes"), "NAME DRIVERS AGE"},
		{gr("storage.k8s.io", "volumeattachments"), "NAME ATTACHER PV NODE ATTACHED AGE"},
		{gr("node.k8s.io", "runtimeclasses"), "NAME HANDLER AGE"},
		{gr("certificates.k8s.io", "certificatesigningrequests"), "NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION"},
		{gr("admissionregistration.k8s.io", "validatingwebhookconfigurations"), "NAME WEBHOOKS AGE"},
		{gr("admissionregistration.k8s.io", "mutatingwebhookconfigurations"), "NAME WEBHOOKS AGE"},
		{gr("flowcontrol.apiserver.k8s.io", "flowschemas"), "NAME PRIORITYLEVEL MATCHINGPRECEDENCE DISTINGUISHERMETHOD AGE MISSINGPL"},
		{gr("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"), "NAME TYPE NOMINALCONCURRENCYSHARES QUEUES HANDSIZE QUEUELENGTHLIMIT AGE"},
		{gr("", "podtemplates"), "NAME CONTAINERS IMAGES POD LABELS"},
		{gr("apiextensions.k8s.io", "customresourcedefinitions"), "NAME SCOPE VERSIONS CREATED AT GROUP* KIND* SHORTNAMES* ESTABLISHED*"},
		{gr("example.com", "widgets"), "NAME CREATED AT"},
	}
	for _, tc := range cases {
		t.Run(tc.gr.String(), func(t *testing.T) {
			got := strings.Join(columnNames(forResource(tc.gr)), " ")
			if got != tc.want {
				t.Errorf("columns\n got: %s\nwant: %s", got, tc.want)
			}
		})
	}
}

func TestColumnDefinitions(t *testing.T) {
	objectMeta := metav1.ObjectMeta{}.SwaggerDoc()
	pod := forResource(gr("", "pods")).Columns
	if c := pod[0]; c.Name != "Name" || c.Type != "string" || c.Format != "name" || c.Description != objectMeta["name"] || c.Description == "" {
		t.Errorf("pod Name column = %+v", c)
	}
	if c := pod[3]; c.Name != "Restarts" || c.Type != "string" || c.Priority != 0 {
		t.Errorf("pod Restarts column = %+v", c)
	}
	if c := pod[4]; c.Name != "Age" || c.Type != "string" || c.Description != objectMeta["creationTimestamp"] {
		t.Errorf("pod Age column = %+v", c)
	}
	if c := pod[5]; c.Name != "IP" || c.Priority != 1 || c.Description != (corev1.PodStatus{}).SwaggerDoc()["podIP"] {
		t.Errorf("pod IP column = %+v", c)
	}
	def := forResource(gr("rbac.authorization.k8s.io", "roles")).Columns
	want := []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: objectMeta["name"]},
		{Name: "Created At", Type: "date", Description: objectMeta["creationTimestamp"]},
	}
	if !reflect.DeepEqual(def, want) {
		t.Errorf("default columns = %+v, want %+v", def, want)
	}
	rs := forResource(gr("apps", "replicasets")).Columns
	if rs[1].Type != "integer" || rs[1].Description == "" {
		t.Errorf("replicaset Desired column = %+v", rs[1])
	}
	// Every column but the RuntimeClass handler (whose description kube
	// looks up where there is none) is described.
	for _, g := range resources.NewBuiltin().Groups() {
		for _, v := range g.Versions {
			for _, info := range v.Resources {
				checkColumns(t, info.GroupResource(), For(info.GroupVersionKind(), info.GroupResource()).Columns)
			}
		}
	}
}

func checkColumns(t *testing.T, g schema.GroupResource, columns []metav1.TableColumnDefinition) {
	t.Helper()
	{
		for _, c := range columns {
			if c.Description == "" && !(g.Resource == "runtimeclasses" && c.Name == "Handler") {
				t.Errorf("%s column %q has no description", g, c.Name)
			}
			switch c.Type {
			case "string", "integer", "boolean", "date", "number":
			default:
				t.Errorf("%s column %q has type %q", g, c.Name, c.Type)
			}
		}
	}
}

func running(name string, ready bool, restarts int32, lastTerminated time.Duration) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{
		Name: name, Ready: ready, RestartCount: restarts,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(time.Minute)}},
	}
	if lastTerminated != 0 {
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: ago(lastTerminated)}
	}
	return cs
}

func containers(names ...string) []corev1.Container {
	var out []corev1.Container
	for _, n := range names {
		out = append(out, corev1.Container{Name: n, Image: n + ":1.0"})
	}
	return out
}

func TestRows(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	podMeta := objMeta("web-0")
	deleting := objMeta("web-0")
	deleting.DeletionTimestamp = agoPtr(time.Second)
	labelsApp := map[string]string{"app": "web"}
	selector := &metav1.LabelSelector{MatchLabels: labelsApp}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labelsApp}, Spec: corev1.PodSpec{Containers: containers("nginx", "sidecar")}}
	readyCond := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}
	initializedCond := corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}
	controller := true

	cases := []struct {
		name string
		gr   schema.GroupResource
		obj  runtime.Object
		want []interface{}
	}{
		{
			name: "pod with 1/2 ready containers and one restart",
			gr:   gr("", "pods"),
			obj: &corev1.Pod{
				ObjectMeta: podMeta,
				Spec:       corev1.PodSpec{NodeName: "node-1", Containers: containers("nginx", "sidecar")},
				Status: corev1.PodStatus{
					Phase: corev1.PodRunning, PodIP: "10.244.0.5", PodIPs: []corev1.PodIP{{IP: "10.244.0.5"}},
					ContainerStatuses: []corev1.ContainerStatus{running("nginx", true, 1, 5*time.Minute), running("sidecar", false, 0, 0)},
				},
			},
			want: []interface{}{"web-0", "1/2", "Running", "1 (5m ago)", "10m", "10.244.0.5", "node-1", "<none>", "<none>"},
		},
		{
			name: "pending pod",
			gr:   gr("", "pods"),
			obj: &corev1.Pod{
				ObjectMeta: podMeta,
				Spec:       corev1.PodSpec{Containers: containers("nginx")},
				Status:     corev1.PodStatus{Phase: corev1.PodPending},
			},
			want: []interface{}{"web-0", "0/1", "Pending", "0", "10m", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "crash looping container",
			gr:   gr("", "pods"),
			obj: &corev1.Pod{
				ObjectMeta: podMeta,
				Spec:       corev1.PodSpec{NodeName: "node-1", Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase: corev1.PodRunning, PodIPs: []corev1.PodIP{{IP: "fd00::5"}, {IP: "10.0.0.5"}},
					ContainerStatuses: []corev1.ContainerStatus{{
						Name: "app", RestartCount: 12,
						State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
						LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, FinishedAt: ago(3 * time.Hour)}},
					}},
				},
			},
			want: []interface{}{"web-0", "0/1", "CrashLoopBackOff", "12 (3h ago)", "10m", "fd00::5", "node-1", "<none>", "<none>"},
		},
		{
			name: "terminated container without reason",
			gr:   gr("", "pods"),
			obj: &corev1.Pod{
				ObjectMeta: podMeta,
				Spec:       corev1.PodSpec{Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase: corev1.PodFailed,
					ContainerStatuses: []corev1.ContainerStatus{{
						Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Signal: 9, ExitCode: 137}},
					}},
				},
			},
			want: []interface{}{"web-0", "0/1", "Signal:9", "0", "10m", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "second init container running",
			gr:   gr("", "pods"),
			obj: &corev1.Pod{
				ObjectMeta: podMeta,
				Spec:       corev1.PodSpec{InitContainers: containers("init-a", "init-b"), Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase: corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{
						{Name: "init-a", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}},
						{Name: "init-b", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
					},
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}},
				},
			},
			want: []interface{}{"web-0", "0/1", "Init:1/2", "0", "10m", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "init container failing",
			gr:   gr("", "pods"),
			obj: &corev1.Pod{
				ObjectMeta: podMeta,
				Spec:       corev1.PodSpec{InitContainers: containers("init"), Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase: corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{{
						Name: "init", RestartCount: 3,
						State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
						LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: ago(90 * time.Second)}},
					}},
				},
			},
			want: []interface{}{"web-0", "0/1", "Init:CrashLoopBackOff", "3 (90s ago)", "10m", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "init container terminated with error",
			gr:   gr("", "pods"),
			obj: &corev1.Pod{
				ObjectMeta: podMeta,
				Spec:       corev1.PodSpec{InitContainers: containers("init"), Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase: corev1.PodFailed,
					InitContainerStatuses: []corev1.ContainerStatus{{
						Name: "init", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3}},
					}},
				},
			},
			want: []interface{}{"web-0", "0/1", "Init:ExitCode:3", "0", "10m", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "running sidecar init container",
			gr:   gr("", "pods"),
			obj: &corev1.Pod{
				ObjectMeta: podMeta,
				Spec: corev1.PodSpec{
					InitContainers: []corev1.Container{{Name: "proxy", Image: "proxy", RestartPolicy: &always}},
					Containers:     containers("app"),
				},
				Status: corev1.PodStatus{
					Phase:      corev1.PodRunning,
					Conditions: []corev1.PodCondition{initializedCond, readyCond},
					InitContainerStatuses: []corev1.ContainerStatus{{
						Name: "proxy", Ready: true, Started: ptr(true), RestartCount: 2,
						State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
						LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: ago(2 * time.Minute)}},
					}},
					ContainerStatuses: []corev1.ContainerStatus{running("app", true, 0, 0)},
				},
			},
			want: []interface{}{"web-0", "2/2", "Running", "2 (2m ago)", "10m", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "completed container while another runs",
			gr:   gr("", "pods"),
			obj: &corev1.Pod{
				ObjectMeta: podMeta,
				Spec:       corev1.PodSpec{Containers: containers("app", "job")},
				Status: corev1.PodStatus{
					Phase:      corev1.PodRunning,
					Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}},
					ContainerStatuses: []corev1.ContainerStatus{
						running("app", true, 0, 0),
						{Name: "job", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}},
					},
				},
			},
			want: []interface{}{"web-0", "1/2", "NotReady", "0", "10m", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "terminating pod with readiness gates and nominated node",
			gr:   gr("", "pods"),
			obj: &corev1.Pod{
				ObjectMeta: deleting,
				Spec: corev1.PodSpec{
					Containers:     containers("app"),
					ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}, {ConditionType: "example.com/dns"}},
				},
				Status: corev1.PodStatus{
					Phase: corev1.PodRunning, NominatedNodeName: "node-2",
					Conditions:        []corev1.PodCondition{{Type: "example.com/lb", Status: corev1.ConditionTrue}},
					ContainerStatuses: []corev1.ContainerStatus{running("app", true, 0, 0)},
				},
			},
			want: []interface{}{"web-0", "1/1", "Terminating", "0", "10m", "<none>", "<none>", "node-2", "1/2"},
		},
		{
			name: "scheduling gated pod",
			gr:   gr("", "pods"),
			obj: &corev1.Pod{
				ObjectMeta: podMeta,
				Spec:       corev1.PodSpec{Containers: containers("app")},
				Status: corev1.PodStatus{
					Phase:      corev1.PodPending,
					Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}},
				},
			},
			want: []interface{}{"web-0", "0/1", "SchedulingGated", "0", "10m", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "evicted pod",
			gr:   gr("", "pods"),
			obj: &corev1.Pod{
				ObjectMeta: podMeta,
				Spec:       corev1.PodSpec{Containers: containers("app")},
				Status:     corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"},
			},
			want: []interface{}{"web-0", "0/1", "Evicted", "0", "10m", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "deployment",
			gr:   gr("apps", "deployments"),
			obj: &appsv1.Deployment{
				ObjectMeta: objMeta("web"),
				Spec:       appsv1.DeploymentSpec{Replicas: ptr(int32(3)), Selector: selector, Template: template},
				Status:     appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2},
			},
			want: []interface{}{"web", "2/3", int64(3), int64(2), "10m", "nginx,sidecar", "nginx:1.0,sidecar:1.0", "app=web"},
		},
		{
			name: "replicaset",
			gr:   gr("apps", "replicasets"),
			obj: &appsv1.ReplicaSet{
				ObjectMeta: objMeta("web-5d4f"),
				Spec:       appsv1.ReplicaSetSpec{Replicas: ptr(int32(3)), Selector: selector, Template: template},
				Status:     appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 1},
			},
			want: []interface{}{"web-5d4f", int64(3), int64(3), int64(1), "10m", "nginx,sidecar", "nginx:1.0,sidecar:1.0", "app=web"},
		},
		{
			name: "statefulset",
			gr:   gr("apps", "statefulsets"),
			obj: &appsv1.StatefulSet{
				ObjectMeta: objMeta("db"),
				Spec:       appsv1.StatefulSetSpec{Replicas: ptr(int32(3)), Selector: selector, Template: template},
				Status:     appsv1.StatefulSetStatus{ReadyReplicas: 1},
			},
			want: []interface{}{"db", "1/3", "10m", "nginx,sidecar", "nginx:1.0,sidecar:1.0"},
		},
		{
			name: "daemonset",
			gr:   gr("apps", "daemonsets"),
			obj: &appsv1.DaemonSet{
				ObjectMeta: objMeta("agent"),
				Spec: appsv1.DaemonSetSpec{Selector: selector, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					Containers: containers("agent"), NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
				}}},
				Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 2, UpdatedNumberScheduled: 3, NumberAvailable: 2},
			},
			want: []interface{}{"agent", int64(3), int64(3), int64(2), int64(3), int64(2), "kubernetes.io/os=linux", "10m", "agent", "agent:1.0", "app=web"},
		},
		{
			name: "controllerrevision",
			gr:   gr("apps", "controllerrevisions"),
			obj: &appsv1.ControllerRevision{
				ObjectMeta: func() metav1.ObjectMeta {
					m := objMeta("agent-6c9d")
					m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", Controller: &controller}}
					return m
				}(),
				Revision: 2,
			},
			want: []interface{}{"agent-6c9d", "daemonset.apps/agent", int64(2), "10m"},
		},
		{
			name: "replicationcontroller",
			gr:   gr("", "replicationcontrollers"),
			obj: &corev1.ReplicationController{
				ObjectMeta: objMeta("rc"),
				Spec:       corev1.ReplicationControllerSpec{Replicas: ptr(int32(2)), Selector: labelsApp, Template: &template},
				Status:     corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 2},
			},
			want: []interface{}{"rc", int64(2), int64(2), int64(2), "10m", "nginx,sidecar", "nginx:1.0,sidecar:1.0", "app=web"},
		},
		{
			name: "podtemplate",
			gr:   gr("", "podtemplates"),
			obj:  &corev1.PodTemplate{ObjectMeta: objMeta("tmpl"), Template: template},
			want: []interface{}{"tmpl", "nginx,sidecar", "nginx:1.0,sidecar:1.0", "app=web"},
		},
		{
			name: "clusterip service",
			gr:   gr("", "services"),
			obj: &corev1.Service{
				ObjectMeta: objMeta("kubernetes"),
				Spec: corev1.ServiceSpec{
					Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.1", ClusterIPs: []string{"10.96.0.1"},
					Ports: []corev1.ServicePort{{Port: 443, Protocol: corev1.ProtocolTCP}},
				},
			},
			want: []interface{}{"kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP", "10m", "<none>"},
		},
		{
			name: "nodeport service",
			gr:   gr("", "services"),
			obj: &corev1.Service{
				ObjectMeta: objMeta("web"),
				Spec: corev1.ServiceSpec{
					Type: corev1.ServiceTypeNodePort, ClusterIPs: []string{"10.96.12.7"}, Selector: labelsApp,
					Ports: []corev1.ServicePort{
						{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP},
						{Port: 53, NodePort: 30053, Protocol: corev1.ProtocolUDP},
					},
				},
			},
			want: []interface{}{"web", "NodePort", "10.96.12.7", "<none>", "80:30080/TCP,53:30053/UDP", "10m", "app=web"},
		},
		{
			name: "pending load balancer",
			gr:   gr("", "services"),
			obj: &corev1.Service{
				ObjectMeta: objMeta("lb"),
				Spec: corev1.ServiceSpec{
					Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.96.0.20"},
					Ports: []corev1.ServicePort{{Port: 80, NodePort: 31000, Protocol: corev1.ProtocolTCP}},
				},
			},
			want: []interface{}{"lb", "LoadBalancer", "10.96.0.20", "<pending>", "80:31000/TCP", "10m", "<none>"},
		},
		{
			name: "load balancer with ingress points and external IPs",
			gr:   gr("", "services"),
			obj: &corev1.Service{
				ObjectMeta: objMeta("lb"),
				Spec: corev1.ServiceSpec{
					Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.96.0.20"}, ExternalIPs: []string{"192.0.2.9"},
					Ports: []corev1.ServicePort{{Port: 80, NodePort: 31000, Protocol: corev1.ProtocolTCP}},
				},
				Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
					{IP: "203.0.113.10"}, {Hostname: "a-very-long-load-balancer.example.com"},
				}}},
			},
			want: []interface{}{"lb", "LoadBalancer", "10.96.0.20", "203.0.113.10,a-very-long-load-balancer.example.com,192.0.2.9", "80:31000/TCP", "10m", "<none>"},
		},
		{
			name: "externalname service",
			gr:   gr("", "services"),
			obj: &corev1.Service{
				ObjectMeta: objMeta("ext"),
				Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"},
			},
			want: []interface{}{"ext", "ExternalName", "<none>", "db.example.com", "<none>", "10m", "<none>"},
		},
		{
			name: "headless service",
			gr:   gr("", "services"),
			obj: &corev1.Service{
				ObjectMeta: objMeta("db"),
				Spec: corev1.ServiceSpec{
					Type: corev1.ServiceTypeClusterIP, ClusterIP: "None", ClusterIPs: []string{"None"},
					Ports: []corev1.ServicePort{{Port: 5432, Protocol: corev1.ProtocolTCP}},
				},
			},
			want: []interface{}{"db", "ClusterIP", "None", "<none>", "5432/TCP", "10m", "<none>"},
		},
		{
			name: "endpoints",
			gr:   gr("", "endpoints"),
			obj: &corev1.Endpoints{
				ObjectMeta: objMeta("web"),
				Subsets: []corev1.EndpointSubset{{
					Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}},
					Ports:     []corev1.EndpointPort{{Name: "http", Port: 80}, {Name: "https", Port: 443}},
				}},
			},
			want: []interface{}{"web", "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...", "10m"},
		},
		{
			name: "endpoints without subsets",
			gr:   gr("", "endpoints"),
			obj:  &corev1.Endpoints{ObjectMeta: objMeta("none")},
			want: []interface{}{"none", "<none>", "10m"},
		},
		{
			name: "unschedulable node with roles",
			gr:   gr("", "nodes"),
			obj: &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{
					Name: "cp-1", CreationTimestamp: ago(50 * 24 * time.Hour),
					Labels: map[string]string{
						"node-role.kubernetes.io/control-plane": "",
						"node-role.kubernetes.io/etcd":          "true",
						"kubernetes.io/role":                    "master",
						"kubernetes.io/hostname":                "cp-1",
					},
				},
				Spec: corev1.NodeSpec{Unschedulable: true},
				Status: corev1.NodeStatus{
					Conditions: []corev1.NodeCondition{
						{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
						{Type: corev1.NodeReady, Status: corev1.ConditionTrue},
					},
					Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "cp-1"}, {Type: corev1.NodeInternalIP, Address: "172.18.0.2"}},
					NodeInfo: corev1.NodeSystemInfo{
						KubeletVersion: "v1.37.2", OSImage: "Debian GNU/Linux 12 (bookworm)", KernelVersion: "6.8.0", ContainerRuntimeVersion: "containerd://2.1.0",
					},
				},
			},
			want: []interface{}{"cp-1", "Ready,SchedulingDisabled", "control-plane,etcd,master", "50d", "v1.37.2",
				"172.18.0.2", "<none>", "Debian GNU/Linux 12 (bookworm)", "6.8.0", "containerd://2.1.0"},
		},
		{
			name: "node without status",
			gr:   gr("", "nodes"),
			obj:  &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "new", CreationTimestamp: ago(30 * time.Second)}},
			want: []interface{}{"new", "Unknown", "<none>", "30s", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
		},
		{
			name: "not ready node",
			gr:   gr("", "nodes"),
			obj: &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "w-1", CreationTimestamp: ago(26 * time.Hour)},
				Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}},
			},
			want: []interface{}{"w-1", "NotReady", "<none>", "26h", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
		},
		{
			name: "namespace",
			gr:   gr("", "namespaces"),
			obj:  &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", CreationTimestamp: ago(3 * time.Hour)}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
			want: []interface{}{"kube-system", "Active", "3h"},
		},
		{
			name: "configmap",
			gr:   gr("", "configmaps"),
			obj:  &corev1.ConfigMap{ObjectMeta: objMeta("cfg"), Data: map[string]string{"a": "1", "b": "2"}, BinaryData: map[string][]byte{"c": {1}}},
			want: []interface{}{"cfg", int64(3), "10m"},
		},
		{
			name: "secret",
			gr:   gr("", "secrets"),
			obj:  &corev1.Secret{ObjectMeta: objMeta("tls"), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}},
			want: []interface{}{"tls", "kubernetes.io/tls", int64(2), "10m"},
		},
		{
			name: "serviceaccount",
			gr:   gr("", "serviceaccounts"),
			obj:  &corev1.ServiceAccount{ObjectMeta: objMeta("default")},
			want: []interface{}{"default", "10m"},
		},
		{
			name: "core event",
			gr:   gr("", "events"),
			obj: &corev1.Event{
				ObjectMeta:     objMeta("web-0.17a"),
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-0", FieldPath: "spec.containers{nginx}"},
				Reason:         "Pulled", Message: "Successfully pulled image \"nginx\"\n", Type: corev1.EventTypeNormal,
				Source:         corev1.EventSource{Component: "kubelet", Host: "node-1"},
				FirstTimestamp: ago(20 * time.Minute), LastTimestamp: ago(2 * time.Minute), Count: 4,
			},
			want: []interface{}{"2m", "Normal", "Pulled", "pod/web-0", "spec.containers{nginx}", "kubelet, node-1",
				"Successfully pulled image \"nginx\"", "20m", int64(4), "web-0.17a"},
		},
		{
			name: "core event from the new API",
			gr:   gr("", "events"),
			obj: &corev1.Event{
				ObjectMeta:     objMeta("node.1"),
				InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "node-1"},
				Reason:         "Starting", Type: corev1.EventTypeNormal,
				EventTime:           metav1.NewMicroTime(now.Add(-5 * time.Minute)),
				ReportingController: "kube-proxy", ReportingInstance: "kube-proxy-node-1",
			},
			want: []interface{}{"5m", "Normal", "Starting", "node/node-1", "", "kube-proxy, kube-proxy-node-1", "", "5m", int64(1), "node.1"},
		},
		{
			name: "events.k8s.io event with series",
			gr:   gr("events.k8s.io", "events"),
			obj: &eventsv1.Event{
				ObjectMeta: objMeta("web.2"),
				Regarding:  corev1.ObjectReference{Kind: "Deployment", Name: "web"},
				Reason:     "ScalingReplicaSet", Note: "Scaled up", Type: corev1.EventTypeNormal,
				EventTime:           metav1.NewMicroTime(now.Add(-time.Hour)),
				Series:              &eventsv1.EventSeries{Count: 7, LastObservedTime: metav1.NewMicroTime(now.Add(-40 * time.Second))},
				ReportingController: "deployment-controller",
			},
			want: []interface{}{"40s", "Normal", "ScalingReplicaSet", "deployment/web", "", "deployment-controller", "Scaled up", "60m", int64(7), "web.2"},
		},
		{
			name: "completed job",
			gr:   gr("batch", "jobs"),
			obj: &batchv1.Job{
				ObjectMeta: objMeta("pi"),
				Spec:       batchv1.JobSpec{Completions: ptr(int32(1)), Parallelism: ptr(int32(1)), Selector: selector, Template: template},
				Status: batchv1.JobStatus{
					Succeeded: 1, StartTime: agoPtr(9 * time.Minute), CompletionTime: agoPtr(9*time.Minute - 34*time.Second),
					Conditions: []batchv1.JobCondition{
						{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue},
						{Type: batchv1.JobComplete, Status: corev1.ConditionTrue},
					},
				},
			},
			want: []interface{}{"pi", "Complete", "1/1", "34s", "10m", "nginx,sidecar", "nginx:1.0,sidecar:1.0", "app=web"},
		},
		{
			name: "running work queue job",
			gr:   gr("batch", "jobs"),
			obj: &batchv1.Job{
				ObjectMeta: objMeta("queue"),
				Spec:       batchv1.JobSpec{Parallelism: ptr(int32(4)), Template: template},
				Status:     batchv1.JobStatus{Succeeded: 0, StartTime: agoPtr(8 * time.Minute)},
			},
			want: []interface{}{"queue", "Running", "0/1 of 4", "8m", "10m", "nginx,sidecar", "nginx:1.0,sidecar:1.0", "<none>"},
		},
		{
			name: "failed job",
			gr:   gr("batch", "jobs"),
			obj: &batchv1.Job{
				ObjectMeta: objMeta("bad"),
				Spec:       batchv1.JobSpec{Completions: ptr(int32(3)), Template: template},
				Status: batchv1.JobStatus{
					Succeeded: 1, StartTime: agoPtr(5 * time.Minute),
					Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}},
				},
			},
			want: []interface{}{"bad", "Failed", "1/3", "5m", "10m", "nginx,sidecar", "nginx:1.0,sidecar:1.0", "<none>"},
		},
		{
			name: "cronjob",
			gr:   gr("batch", "cronjobs"),
			obj: &batchv1.CronJob{
				ObjectMeta: objMeta("backup"),
				Spec: batchv1.CronJobSpec{
					Schedule: "*/5 * * * *", Suspend: ptr(false), TimeZone: ptr("Etc/UTC"),
					JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template}},
				},
				Status: batchv1.CronJobStatus{Active: []corev1.ObjectReference{{Name: "backup-1"}}, LastScheduleTime: agoPtr(65 * time.Second)},
			},
			want: []interface{}{"backup", "*/5 * * * *", "Etc/UTC", "False", int64(1), "65s", "10m", "nginx,sidecar", "nginx:1.0,sidecar:1.0", "<none>"},
		},
		{
			name: "new cronjob",
			gr:   gr("batch", "cronjobs"),
			obj:  &batchv1.CronJob{ObjectMeta: objMeta("nightly"), Spec: batchv1.CronJobSpec{Schedule: "@daily"}},
			want: []interface{}{"nightly", "@daily", "<none>", "<unset>", int64(0), "<none>", "10m", "", "", "<none>"},
		},
		{
			name: "bound persistent volume",
			gr:   gr("", "persistentvolumes"),
			obj: &corev1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{Name: "pv-1", CreationTimestamp: ago(10 * time.Minute)},
				Spec: corev1.PersistentVolumeSpec{
					Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
					AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadWriteOnce, corev1.ReadWriteOnce},
					PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
					ClaimRef:                      &corev1.ObjectReference{Namespace: "default", Name: "data"},
					StorageClassName:              "standard",
					VolumeMode:                    ptr(corev1.PersistentVolumeFilesystem),
				},
				Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
			},
			want: []interface{}{"pv-1", "10Gi", "RWO,RWOP", "Retain", "Bound", "default/data", "standard", "<unset>", "", "10m", "Filesystem"},
		},
		{
			name: "bound claim",
			gr:   gr("", "persistentvolumeclaims"),
			obj: &corev1.PersistentVolumeClaim{
				ObjectMeta: func() metav1.ObjectMeta {
					m := objMeta("data")
					m.Annotations = map[string]string{"volume.beta.kubernetes.io/storage-class": "legacy"}
					return m
				}(),
				Spec: corev1.PersistentVolumeClaimSpec{
					VolumeName: "pv-1", StorageClassName: ptr("standard"), VolumeMode: ptr(corev1.PersistentVolumeBlock),
					VolumeAttributesClassName: ptr("gold"),
				},
				Status: corev1.PersistentVolumeClaimStatus{
					Phase:       corev1.ClaimBound,
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadOnlyMany},
					Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
				},
			},
			want: []interface{}{"data", "Bound", "pv-1", "5Gi", "ROX,RWX", "legacy", "gold", "10m", "Block"},
		},
		{
			name: "pending claim",
			gr:   gr("", "persistentvolumeclaims"),
			obj: &corev1.PersistentVolumeClaim{
				ObjectMeta: objMeta("data"),
				Spec:       corev1.PersistentVolumeClaimSpec{StorageClassName: ptr("standard")},
				Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
			},
			want: []interface{}{"data", "Pending", "", "", "", "standard", "<unset>", "10m", "<unset>"},
		},
		{
			name: "default storage class",
			gr:   gr("storage.k8s.io", "storageclasses"),
			obj: &storagev1.StorageClass{
				ObjectMeta: metav1.ObjectMeta{
					Name: "standard", CreationTimestamp: ago(10 * time.Minute),
					Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
				},
				Provisioner:       "rancher.io/local-path",
				VolumeBindingMode: ptr(storagev1.VolumeBindingWaitForFirstConsumer),
			},
			want: []interface{}{"standard (default)", "rancher.io/local-path", "Delete", "WaitForFirstConsumer", false, "10m"},
		},
		{
			name: "ingress",
			gr:   gr("networking.k8s.io", "ingresses"),
			obj: &networkingv1.Ingress{
				ObjectMeta: objMeta("web"),
				Spec: networkingv1.IngressSpec{
					IngressClassName: ptr("nginx"),
					Rules:            []networkingv1.IngressRule{{Host: "a.example.com"}, {Host: "b.example.com"}, {}, {Host: "c.example.com"}, {Host: "d.example.com"}},
					TLS:              []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}}},
				},
				Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1"}}}},
			},
			want: []interface{}{"web", "nginx", "a.example.com,b.example.com,c.example.com + 2 more...", "192.0.2.1", "80, 443", "10m"},
		},
		{
			name: "ingress without rules",
			gr:   gr("networking.k8s.io", "ingresses"),
			obj:  &networkingv1.Ingress{ObjectMeta: objMeta("default-backend")},
			want: []interface{}{"default-backend", "<none>", "*", "", "80", "10m"},
		},
		{
			name: "ingressclass",
			gr:   gr("networking.k8s.io", "ingressclasses"),
			obj: &networkingv1.IngressClass{
				ObjectMeta: objMeta("nginx"),
				Spec: networkingv1.IngressClassSpec{
					Controller: "k8s.io/ingress-nginx",
					Parameters: &networkingv1.IngressClassParametersReference{APIGroup: ptr("k8s.example.com"), Kind: "IngressParameters", Name: "external-lb"},
				},
			},
			want: []interface{}{"nginx", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/external-lb", "10m"},
		},
		{
			name: "networkpolicy selecting all pods",
			gr:   gr("networking.k8s.io", "networkpolicies"),
			obj:  &networkingv1.NetworkPolicy{ObjectMeta: objMeta("deny-all")},
			want: []interface{}{"deny-all", "<none>", "10m"},
		},
		{
			name: "networkpolicy",
			gr:   gr("networking.k8s.io", "networkpolicies"),
			obj:  &networkingv1.NetworkPolicy{ObjectMeta: objMeta("web"), Spec: networkingv1.NetworkPolicySpec{PodSelector: *selector}},
			want: []interface{}{"web", "app=web", "10m"},
		},
		{
			name: "role uses the default printer",
			gr:   gr("rbac.authorization.k8s.io", "roles"),
			obj:  &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "reader", CreationTimestamp: metav1.NewTime(time.Date(2026, 2, 3, 4, 5, 6, 0, time.FixedZone("X", 3600)))}},
			want: []interface{}{"reader", "2026-02-03T03:05:06Z"},
		},
		{
			name: "unstructured clusterrole uses the default printer",
			gr:   gr("rbac.authorization.k8s.io", "clusterroles"),
			obj: &unstructured.Unstructured{Object: map[string]interface{}{
				"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
				"metadata": map[string]interface{}{"name": "admin", "creationTimestamp": "2026-01-02T03:04:05Z"},
			}},
			want: []interface{}{"admin", "2026-01-02T03:04:05Z"},
		},
		{
			name: "rolebinding",
			gr:   gr("rbac.authorization.k8s.io", "rolebindings"),
			obj: &rbacv1.RoleBinding{
				ObjectMeta: objMeta("read"),
				RoleRef:    rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
				Subjects: []rbacv1.Subject{
					{Kind: "User", Name: "alice"}, {Kind: "User", Name: "bob"}, {Kind: "Group", Name: "devs"},
					{Kind: "ServiceAccount", Namespace: "ci", Name: "runner"},
				},
			},
			want: []interface{}{"read", "ClusterRole/view", "10m", "alice, bob", "devs", "ci/runner"},
		},
		{
			name: "clusterrolebinding",
			gr:   gr("rbac.authorization.k8s.io", "clusterrolebindings"),
			obj: &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "cluster-admin", CreationTimestamp: ago(10 * time.Minute)},
				RoleRef:    rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects:   []rbacv1.Subject{{Kind: "Group", Name: "system:masters"}},
			},
			want: []interface{}{"cluster-admin", "ClusterRole/cluster-admin", "10m", "", "system:masters", ""},
		},
		{
			name: "limitrange uses the default printer",
			gr:   gr("", "limitranges"),
			obj:  &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits", CreationTimestamp: metav1.NewTime(now)}},
			want: []interface{}{"limits", now.UTC().Format(time.RFC3339)},
		},
		{
			name: "lease",
			gr:   gr("coordination.k8s.io", "leases"),
			obj:  &coordinationv1.Lease{ObjectMeta: objMeta("kube-scheduler"), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("cp-1_4b1c")}},
			want: []interface{}{"kube-scheduler", "cp-1_4b1c", "10m"},
		},
		{
			name: "horizontalpodautoscaler v2",
			gr:   gr("autoscaling", "horizontalpodautoscalers"),
			obj: &autoscalingv2.HorizontalPodAutoscaler{
				ObjectMeta: objMeta("web"),
				Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
					ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"},
					MinReplicas:    ptr(int32(2)), MaxReplicas: 10,
					Metrics: []autoscalingv2.MetricSpec{
						{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
							Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(80))}}},
						{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
							Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr(resource.MustParse("512Mi"))}}},
						{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
							Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr(resource.MustParse("1k"))}}},
					},
				},
				Status: autoscalingv2.HorizontalPodAutoscalerStatus{
					CurrentReplicas: 3,
					CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
						Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr(int32(45))}}}},
				},
			},
			want: []interface{}{"web", "Deployment/web", "cpu: 45%/80%, memory: <unknown>/512Mi + 1 more...", "2", int64(10), int64(3), "10m"},
		},
		{
			name: "horizontalpodautoscaler v1",
			gr:   gr("autoscaling", "horizontalpodautoscalers"),
			obj: &autoscalingv1.HorizontalPodAutoscaler{
				ObjectMeta: objMeta("web"),
				Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
					ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web"},
					MaxReplicas:    5, TargetCPUUtilizationPercentage: ptr(int32(50)),
				},
			},
			want: []interface{}{"web", "Deployment/web", "cpu: <unknown>/50%", "<unset>", int64(5), int64(0), "10m"},
		},
		{
			name: "poddisruptionbudget",
			gr:   gr("policy", "poddisruptionbudgets"),
			obj: &policyv1.PodDisruptionBudget{
				ObjectMeta: objMeta("web"),
				Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr(intstr.FromString("25%"))},
				Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1},
			},
			want: []interface{}{"web", "N/A", "25%", int64(1), "10m"},
		},
		{
			name: "priorityclass",
			gr:   gr("scheduling.k8s.io", "priorityclasses"),
			obj: &schedulingv1.PriorityClass{
				ObjectMeta: metav1.ObjectMeta{Name: "system-node-critical", CreationTimestamp: ago(10 * time.Minute)},
				Value:      2000001000, PreemptionPolicy: ptr(corev1.PreemptLowerPriority),
			},
			want: []interface{}{"system-node-critical", int64(2000001000), false, "10m", "PreemptLowerPriority"},
		},
		{
			name: "resourcequota",
			gr:   gr("", "resourcequotas"),
			obj: &corev1.ResourceQuota{
				ObjectMeta: objMeta("quota"),
				Status: corev1.ResourceQuotaStatus{
					Hard: corev1.ResourceList{"pods": resource.MustParse("10"), "requests.cpu": resource.MustParse("2"), "limits.memory": resource.MustParse("2Gi")},
					Used: corev1.ResourceList{"pods": resource.MustParse("3"), "requests.cpu": resource.MustParse("500m")},
				},
			},
			want: []interface{}{"quota", "pods: 3/10, requests.cpu: 500m/2", "limits.memory: 0/2Gi", "10m"},
		},
		{
			name: "endpointslice",
			gr:   gr("discovery.k8s.io", "endpointslices"),
			obj: &discoveryv1.EndpointSlice{
				ObjectMeta:  objMeta("web-abc12"),
				AddressType: discoveryv1.AddressTypeIPv4,
				Ports:       []discoveryv1.EndpointPort{{Port: ptr(int32(80))}, {Name: ptr("metrics")}},
				Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}, {Addresses: []string{"10.0.0.2", "10.0.0.3"}}, {Addresses: []string{"10.0.0.4"}}},
			},
			want: []interface{}{"web-abc12", "IPv4", "80,metrics", "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...", "10m"},
		},
		{
			name: "empty endpointslice",
			gr:   gr("discovery.k8s.io", "endpointslices"),
			obj:  &discoveryv1.EndpointSlice{ObjectMeta: objMeta("web-x"), AddressType: discoveryv1.AddressTypeIPv6},
			want: []interface{}{"web-x", "IPv6", "<unset>", "<unset>", "10m"},
		},
		{
			name: "csidriver",
			gr:   gr("storage.k8s.io", "csidrivers"),
			obj: &storagev1.CSIDriver{
				ObjectMeta: metav1.ObjectMeta{Name: "ebs.csi.aws.com", CreationTimestamp: ago(10 * time.Minute)},
				Spec: storagev1.CSIDriverSpec{
					AttachRequired: ptr(false), PodInfoOnMount: ptr(true),
					VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral},
					TokenRequests:        []storagev1.TokenRequest{{Audience: "sts.amazonaws.com"}},
				},
			},
			want: []interface{}{"ebs.csi.aws.com", false, true, false, "sts.amazonaws.com", false, "Persistent,Ephemeral", "10m"},
		},
		{
			name: "csinode",
			gr:   gr("storage.k8s.io", "csinodes"),
			obj: &storagev1.CSINode{
				ObjectMeta: metav1.ObjectMeta{Name: "node-1", CreationTimestamp: ago(10 * time.Minute)},
				Spec:       storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "a"}, {Name: "b"}}},
			},
			want: []interface{}{"node-1", int64(2), "10m"},
		},
		{
			name: "volumeattachment",
			gr:   gr("storage.k8s.io", "volumeattachments"),
			obj: &storagev1.VolumeAttachment{
				ObjectMeta: metav1.ObjectMeta{Name: "csi-123", CreationTimestamp: ago(10 * time.Minute)},
				Spec: storagev1.VolumeAttachmentSpec{
					Attacher: "ebs.csi.aws.com", NodeName: "node-1",
					Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr("pv-1")},
				},
				Status: storagev1.VolumeAttachmentStatus{Attached: true},
			},
			want: []interface{}{"csi-123", "ebs.csi.aws.com", "pv-1", "node-1", true, "10m"},
		},
		{
			name: "runtimeclass",
			gr:   gr("node.k8s.io", "runtimeclasses"),
			obj:  &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor", CreationTimestamp: ago(10 * time.Minute)}, Handler: "runsc"},
			want: []interface{}{"gvisor", "runsc", "10m"},
		},
		{
			name: "issued certificatesigningrequest",
			gr:   gr("certificates.k8s.io", "certificatesigningrequests"),
			obj: &certificatesv1.CertificateSigningRequest{
				ObjectMeta: metav1.ObjectMeta{Name: "csr-abc", CreationTimestamp: ago(10 * time.Minute)},
				Spec: certificatesv1.CertificateSigningRequestSpec{
					SignerName: "kubernetes.io/kube-apiserver-client", Username: "alice", ExpirationSeconds: ptr(int32(86400)),
				},
				Status: certificatesv1.CertificateSigningRequestStatus{
					Conditions:  []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}},
					Certificate: []byte("pem"),
				},
			},
			want: []interface{}{"csr-abc", "10m", "kubernetes.io/kube-apiserver-client", "alice", "24h", "Approved,Issued"},
		},
		{
			name: "pending certificatesigningrequest",
			gr:   gr("certificates.k8s.io", "certificatesigningrequests"),
			obj: &certificatesv1.CertificateSigningRequest{
				ObjectMeta: metav1.ObjectMeta{Name: "csr-new", CreationTimestamp: ago(10 * time.Minute)},
				Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: "kubernetes.io/kubelet-serving", Username: "system:node:n1"},
			},
			want: []interface{}{"csr-new", "10m", "kubernetes.io/kubelet-serving", "system:node:n1", "<none>", "Pending"},
		},
		{
			name: "validatingwebhookconfiguration",
			gr:   gr("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
			obj: &admissionregistrationv1.ValidatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "policy", CreationTimestamp: ago(10 * time.Minute)},
				Webhooks:   []admissionregistrationv1.ValidatingWebhook{{Name: "a.example.com"}, {Name: "b.example.com"}},
			},
			want: []interface{}{"policy", int64(2), "10m"},
		},
		{
			name: "mutatingwebhookconfiguration",
			gr:   gr("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
			obj: &admissionregistrationv1.MutatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "inject", CreationTimestamp: ago(10 * time.Minute)},
				Webhooks:   []admissionregistrationv1.MutatingWebhook{{Name: "a.example.com"}},
			},
			want: []interface{}{"inject", int64(1), "10m"},
		},
		{
			name: "validatingadmissionpolicy",
			gr:   gr("admissionregistration.k8s.io", "validatingadmissionpolicies"),
			obj: &admissionregistrationv1.ValidatingAdmissionPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: "replicas", CreationTimestamp: ago(10 * time.Minute)},
				Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
					ParamKind:   &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
					Validations: []admissionregistrationv1.Validation{{Expression: "true"}},
				},
			},
			want: []interface{}{"replicas", int64(1), "v1/ConfigMap", "10m"},
		},
		{
			name: "validatingadmissionpolicybinding",
			gr:   gr("admissionregistration.k8s.io", "validatingadmissionpolicybindings"),
			obj: &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "replicas-binding", CreationTimestamp: ago(10 * time.Minute)},
				Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
					PolicyName: "replicas", ParamRef: &admissionregistrationv1.ParamRef{Name: "limits"},
				},
			},
			want: []interface{}{"replicas-binding", "replicas", "*/limits", "10m"},
		},
		{
			name: "flowschema",
			gr:   gr("flowcontrol.apiserver.k8s.io", "flowschemas"),
			obj: &flowcontrolv1.FlowSchema{
				ObjectMeta: metav1.ObjectMeta{Name: "system-leader-election", CreationTimestamp: ago(10 * time.Minute)},
				Spec: flowcontrolv1.FlowSchemaSpec{
					PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "leader-election"},
					MatchingPrecedence:         100,
					DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
				},
				Status: flowcontrolv1.FlowSchemaStatus{Conditions: []flowcontrolv1.FlowSchemaCondition{{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionFalse}}},
			},
			want: []interface{}{"system-leader-election", "leader-election", int64(100), "ByUser", "10m", "False"},
		},
		{
			name: "limited prioritylevelconfiguration",
			gr:   gr("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"),
			obj: &flowcontrolv1.PriorityLevelConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "workload-low", CreationTimestamp: ago(10 * time.Minute)},
				Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
					Type: flowcontrolv1.PriorityLevelEnablementLimited,
					Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
						NominalConcurrencyShares: ptr(int32(100)),
						LimitResponse: flowcontrolv1.LimitResponse{
							Type:    flowcontrolv1.LimitResponseTypeQueue,
							Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 128, HandSize: 6, QueueLengthLimit: 50},
						},
					},
				},
			},
			want: []interface{}{"workload-low", "Limited", int32(100), int32(128), int32(6), int32(50), "10m"},
		},
		{
			name: "exempt prioritylevelconfiguration",
			gr:   gr("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"),
			obj: &flowcontrolv1.PriorityLevelConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "exempt", CreationTimestamp: ago(10 * time.Minute)},
				Spec:       flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementExempt},
			},
			want: []interface{}{"exempt", "Exempt", "<none>", "<none>", "<none>", "<none>", "10m"},
		},
		{
			name: "servicecidr",
			gr:   gr("networking.k8s.io", "servicecidrs"),
			obj: &networkingv1.ServiceCIDR{
				ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", CreationTimestamp: ago(10 * time.Minute)},
				Spec:       networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/16", "fd00:10:96::/112"}},
			},
			want: []interface{}{"kubernetes", "10.96.0.0/16,fd00:10:96::/112", "10m"},
		},
		{
			name: "volumeattributesclass",
			gr:   gr("storage.k8s.io", "volumeattributesclasses"),
			obj: &storagev1.VolumeAttributesClass{
				ObjectMeta: metav1.ObjectMeta{Name: "gold", CreationTimestamp: ago(10 * time.Minute)},
				DriverName: "pd.csi.storage.gke.io",
			},
			want: []interface{}{"gold", "pd.csi.storage.gke.io", "10m"},
		},
		{
			name: "csistoragecapacity uses the default printer",
			gr:   gr("storage.k8s.io", "csistoragecapacities"),
			obj: &storagev1.CSIStorageCapacity{
				ObjectMeta: objMeta("csisc-1"), StorageClassName: "standard", Capacity: ptr(resource.MustParse("100Gi")),
			},
			// kube-apiserver serves them with its default table.
			want: []interface{}{"csisc-1", ago(10 * time.Minute).UTC().Format(time.RFC3339)},
		},
		{
			name: "clustertrustbundle",
			gr:   gr("certificates.k8s.io", "clustertrustbundles"),
			obj:  &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "root"}},
			want: []interface{}{"root", "<none>"},
		},
		{
			name: "issued podcertificaterequest",
			gr:   gr("certificates.k8s.io", "podcertificaterequests"),
			obj: &certificatesv1.PodCertificateRequest{
				ObjectMeta: objMeta("req-1"),
				Spec: certificatesv1.PodCertificateRequestSpec{
					PodName: "web-0", ServiceAccountName: "web", NodeName: "node-1", SignerName: "example.com/signer",
				},
				Status: certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{{Type: "Issued", Status: metav1.ConditionTrue}}},
			},
			want: []interface{}{"req-1", "web-0", "web", "node-1", "example.com/signer", "Issued", "<none>"},
		},
		{
			name: "mutatingadmissionpolicy",
			gr:   gr("admissionregistration.k8s.io", "mutatingadmissionpolicies"),
			obj: &admissionregistrationv1.MutatingAdmissionPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: "labels", CreationTimestamp: ago(10 * time.Minute)},
				Spec:       admissionregistrationv1.MutatingAdmissionPolicySpec{Mutations: []admissionregistrationv1.Mutation{{}, {}}},
			},
			want: []interface{}{"labels", int64(2), "<unset>", "10m"},
		},
		{
			name: "mutatingadmissionpolicybinding with selector",
			gr:   gr("admissionregistration.k8s.io", "mutatingadmissionpolicybindings"),
			obj: &admissionregistrationv1.MutatingAdmissionPolicyBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "labels", CreationTimestamp: ago(10 * time.Minute)},
				Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{
					PolicyName: "labels", ParamRef: &admissionregistrationv1.ParamRef{Namespace: "ns", Name: "p"},
				},
			},
			want: []interface{}{"labels", "labels", "ns/p", "10m"},
		},
		{
			name: "deviceclass",
			gr:   gr("resource.k8s.io", "deviceclasses"),
			obj:  &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu.example.com", CreationTimestamp: ago(10 * time.Minute)}},
			want: []interface{}{"gpu.example.com", "10m"},
		},
		{
			name: "reserved resourceclaim",
			gr:   gr("resource.k8s.io", "resourceclaims"),
			obj: &resourcev1.ResourceClaim{
				ObjectMeta: objMeta("gpu"),
				Status: resourcev1.ResourceClaimStatus{
					Allocation:  &resourcev1.AllocationResult{},
					ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "web-0"}},
				},
			},
			want: []interface{}{"gpu", "allocated,reserved", "10m"},
		},
		{
			name: "resourceslice",
			gr:   gr("resource.k8s.io", "resourceslices"),
			obj: &resourcev1.ResourceSlice{
				ObjectMeta: metav1.ObjectMeta{Name: "node-1-gpu", CreationTimestamp: ago(10 * time.Minute)},
				Spec:       resourcev1.ResourceSliceSpec{NodeName: ptr("node-1"), Driver: "gpu.example.com", Pool: resourcev1.ResourcePool{Name: "node-1"}},
			},
			want: []interface{}{"node-1-gpu", "node-1", "gpu.example.com", "node-1", "10m"},
		},
		{
			name: "componentstatus",
			gr:   gr("", "componentstatuses"),
			obj: &corev1.ComponentStatus{
				ObjectMeta: metav1.ObjectMeta{Name: "etcd-0"},
				Conditions: []corev1.ComponentCondition{{Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"}},
			},
			want: []interface{}{"etcd-0", "Healthy", "ok", ""},
		},
		{
			name: "unstructured pod is converted",
			gr:   gr("", "pods"),
			obj: &unstructured.Unstructured{Object: map[string]interface{}{
				"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]interface{}{"name": "u", "creationTimestamp": now.Add(-2 * time.Hour).Format(time.RFC3339)},
				"spec":     map[string]interface{}{"containers": []interface{}{map[string]interface{}{"name": "c", "image": "i"}}},
				"status":   map[string]interface{}{"phase": "Pending"},
			}},
			want: []interface{}{"u", "0/1", "Pending", "0", "120m", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "unknown resource uses the default printer",
			gr:   gr("example.com", "widgets"),
			obj: &unstructured.Unstructured{Object: map[string]interface{}{
				"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]interface{}{"name": "w1", "creationTimestamp": "2025-12-31T23:59:59Z"},
			}},
			want: []interface{}{"w1", "2025-12-31T23:59:59Z"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := forResource(tc.gr)
			// Printed as a list of one, as `kubectl get` lists.
			got := p.Rows([]runtime.Object{tc.obj}, now)[0].Cells
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("row\n got: %#v\nwant: %#v", got, tc.want)
			}
			if len(got) != len(p.Columns) {
				t.Errorf("%d cells for %d columns", len(got), len(p.Columns))
			}
		})
	}
}

func TestIPAddressRowHasKubeExtraAgeCell(t *testing.T) {
	p := forResource(gr("networking.k8s.io", "ipaddresses"))
	got := p.Row(&networkingv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Name: "10.96.0.10", CreationTimestamp: ago(10 * time.Minute)},
		Spec:       networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "kube-system", Name: "kube-dns"}},
	}, now)
	want := []interface{}{"10.96.0.10", "services/kube-system/kube-dns", "10m"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("row = %#v, want %#v", got, want)
	}
	if len(p.Columns) != 2 {
		t.Errorf("%d columns, want 2", len(p.Columns))
	}
}

func TestUnexpectedObjects(t *testing.T) {
	// A printer given an object of another type prints its name.
	p := forResource(gr("apps", "deployments"))
	if got := p.Row(&corev1.ConfigMap{ObjectMeta: objMeta("cm")}, now); len(got) == 0 || got[0] != "cm" {
		t.Errorf("row = %#v, want one that starts with the name", got)
	}
	// Nil objects do not panic.
	var nilPod *corev1.Pod
	if got := forResource(gr("", "pods")).Row(nilPod, now); len(got) != 9 {
		t.Errorf("nil pod row = %#v", got)
	}
	if got := forResource(gr("", "limitranges")).Row(nil, now); !reflect.DeepEqual(got, []interface{}{"", ""}) {
		t.Errorf("nil default row = %#v", got)
	}
}

func TestAges(t *testing.T) {
	cases := []struct {
		created metav1.Time
		want    string
	}{
		{metav1.Time{}, "<unknown>"},
		{ago(0), "0s"},
		{ago(119 * time.Second), "119s"},
		{ago(7*time.Minute + 5*time.Second), "7m5s"},
		{ago(2*time.Hour + 30*time.Minute), "150m"},
		{ago(5*time.Hour + 12*time.Minute), "5h12m"},
		{ago(3*24*time.Hour + 4*time.Hour), "3d4h"},
		{ago(400 * 24 * time.Hour), "400d"},
		{metav1.NewTime(now.Add(time.Hour)), "<invalid>"},
	}
	p := forResource(gr("", "namespaces"))
	for _, tc := range cases {
		got := p.Row(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", CreationTimestamp: tc.created}}, now)[2]
		if got != tc.want {
			t.Errorf("age of %v = %v, want %s", tc.created, got, tc.want)
		}
	}
}

// forResource is For for a built-in resource named by group and resource,
// in its preferred version.
func forResource(gr schema.GroupResource) *Printer {
	for _, g := range resources.NewBuiltin().Groups() {
		for _, v := range g.Versions {
			for _, info := range v.Resources {
				if info.Group == gr.Group && info.Resource == gr.Resource {
					return For(info.GroupVersionKind(), gr)
				}
			}
		}
	}
	return defaultPrinter
}

// TestFinishedPodRowsAreMarked: as kube-apiserver's, a finished pod's row
// carries the Completed condition, with why.
func TestFinishedPodRowsAreMarked(t *testing.T) {
	p := forResource(gr("", "pods"))
	pod := func(phase corev1.PodPhase) runtime.Object {
		return &corev1.Pod{ObjectMeta: objMeta("p"), Status: corev1.PodStatus{Phase: phase}}
	}
	rows := p.Rows([]runtime.Object{pod(corev1.PodRunning), pod(corev1.PodSucceeded), pod(corev1.PodFailed)}, time.Now())
	if len(rows[0].Conditions) != 0 {
		t.Errorf("a running pod's row has conditions %+v", rows[0].Conditions)
	}
	for i, want := range []string{"The pod has completed successfully.", "The pod failed."} {
		c := rows[i+1].Conditions
		if len(c) != 1 || c[0].Type != metav1.RowCompleted || c[0].Status != metav1.ConditionTrue || c[0].Message != want {
			t.Errorf("row %d's conditions %+v, want Completed: %s", i+1, c, want)
		}
	}
}

// TestNoRowsIsNull: the kinds whose kube table convertors leave an empty
// list's rows null are told apart from those that give [].
func TestNoRowsIsNull(t *testing.T) {
	for gr, want := range map[schema.GroupResource]bool{
		gr("rbac.authorization.k8s.io", "roles"):        true,
		gr("rbac.authorization.k8s.io", "clusterroles"): true,
		gr("", "limitranges"):                           true,
		gr("storage.k8s.io", "csistoragecapacities"):    true,
		gr("", "pods"):            false,
		gr("", "configmaps"):      false,
		gr("apps", "deployments"): false,
		gr("apiextensions.k8s.io", "customresourcedefinitions"): true,
		gr("apiregistration.k8s.io", "apiservices"):             false,
	} {
		if got := forResource(gr).NoRowsIsNull; got != want {
			t.Errorf("%s: NoRowsIsNull %v, want %v", gr, got, want)
		}
	}
}
