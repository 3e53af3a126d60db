package resources

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestDefaults(t *testing.T) {
	reg := NewBuiltin()

	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "a", Image: "nginx"}, {Name: "b", Image: "nginx:1.27", Ports: []corev1.ContainerPort{{ContainerPort: 80}}},
	}}}
	reg.Lookup("", "v1", "pods").Default(pod)
	s := pod.Spec
	if s.RestartPolicy != corev1.RestartPolicyAlways || s.DNSPolicy != corev1.DNSClusterFirst || *s.TerminationGracePeriodSeconds != 30 ||
		s.SchedulerName != "default-scheduler" || s.SecurityContext == nil || !*s.EnableServiceLinks {
		t.Fatalf("pod spec defaults: %+v", s)
	}
	if s.Containers[0].ImagePullPolicy != corev1.PullAlways || s.Containers[1].ImagePullPolicy != corev1.PullIfNotPresent ||
		s.Containers[1].TerminationMessagePath != "/dev/termination-log" || s.Containers[1].Ports[0].Protocol != corev1.ProtocolTCP {
		t.Fatalf("container defaults: %+v", s.Containers)
	}

	d := &appsv1.Deployment{}
	reg.Lookup("apps", "v1", "deployments").Default(d)
	if *d.Spec.Replicas != 1 || d.Spec.Strategy.RollingUpdate.MaxSurge.String() != "25%" || *d.Spec.RevisionHistoryLimit != 10 || *d.Spec.ProgressDeadlineSeconds != 600 {
		t.Fatalf("deployment defaults: %+v", d.Spec)
	}

	svc := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	reg.Lookup("", "v1", "services").Default(svc)
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.Ports[0].TargetPort != intstr.FromInt32(80) ||
		svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP || svc.Spec.SessionAffinity != corev1.ServiceAffinityNone {
		t.Fatalf("service defaults: %+v", svc.Spec)
	}

	secret := &corev1.Secret{}
	reg.Lookup("", "v1", "secrets").Default(secret)
	if secret.Type != corev1.SecretTypeOpaque {
		t.Fatalf("secret type %q", secret.Type)
	}

	// Defaults never overwrite what is set.
	set := &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}}
	reg.Lookup("", "v1", "pods").Default(set)
	if set.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Fatalf("restartPolicy overwritten: %q", set.Spec.RestartPolicy)
	}
}
