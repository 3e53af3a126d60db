package printers

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	appsv1beta1 "k8s.io/api/apps/v1beta1"
	batchv1 "k8s.io/api/batch/v1"
	batchv1beta1 "k8s.io/api/batch/v1beta1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

func addApps(add addFunc) {
	add("apps", deploymentPrinter(), "deployments")
	add("apps", replicaSetPrinter(), "replicasets")
	add("apps", statefulSetPrinter(), "statefulsets")
	add("apps", daemonSetPrinter(), "daemonsets")
	add("apps", controllerRevisionPrinter(), "controllerrevisions")
}

func addBatch(add addFunc) {
	add("batch", jobPrinter(), "jobs")
	add("batch", cronJobPrinter(), "cronjobs")
}

// The column descriptions below come from the same (sometimes older)
// API versions kube-apiserver's printers take them from.

func deploymentPrinter() *Printer {
	statusDoc := extensionsv1beta1.DeploymentStatus{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		column("Ready", "string", "Number of the pod with ready state"),
		column("Up-to-date", "string", statusDoc["updatedReplicas"]),
		column("Available", "string", statusDoc["availableReplicas"]),
		ageColumn(),
		wide("Containers", "string", containersDescription),
		wide("Images", "string", imagesDescription),
		wide("Selector", "string", extensionsv1beta1.DeploymentSpec{}.SwaggerDoc()["selector"]),
	), func(obj *appsv1.Deployment, now time.Time) []interface{} {
		selector := ""
		if s, err := metav1.LabelSelectorAsSelector(obj.Spec.Selector); err != nil {
			selector = "<invalid>"
		} else {
			selector = s.String()
		}
		names, images := containerCells(obj.Spec.Template.Spec.Containers)
		return []interface{}{
			obj.Name, fmt.Sprintf("%d/%d", int64(obj.Status.ReadyReplicas), int64(deref(obj.Spec.Replicas))),
			int64(obj.Status.UpdatedReplicas), int64(obj.Status.AvailableReplicas), since(obj.CreationTimestamp, now),
			names, images, selector,
		}
	})
}

func replicaSetPrinter() *Printer {
	columns := replicaColumns(extensionsv1beta1.ReplicaSetSpec{}.SwaggerDoc(), extensionsv1beta1.ReplicaSetStatus{}.SwaggerDoc())
	return typed(columns, func(obj *appsv1.ReplicaSet, now time.Time) []interface{} {
		names, images := containerCells(obj.Spec.Template.Spec.Containers)
		return []interface{}{
			obj.Name, int64(deref(obj.Spec.Replicas)), int64(obj.Status.Replicas), int64(obj.Status.ReadyReplicas),
			since(obj.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(obj.Spec.Selector),
		}
	})
}

func statefulSetPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("Ready", "string", "Number of the pod with ready state"),
		ageColumn(),
		wide("Containers", "string", containersDescription),
		wide("Images", "string", imagesDescription),
	), func(obj *appsv1.StatefulSet, now time.Time) []interface{} {
		names, images := containerCells(obj.Spec.Template.Spec.Containers)
		return []interface{}{
			obj.Name, fmt.Sprintf("%d/%d", int64(obj.Status.ReadyReplicas), int64(deref(obj.Spec.Replicas))),
			since(obj.CreationTimestamp, now), names, images,
		}
	})
}

func daemonSetPrinter() *Printer {
	statusDoc := extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		column("Desired", "integer", statusDoc["desiredNumberScheduled"]),
		column("Current", "integer", statusDoc["currentNumberScheduled"]),
		column("Ready", "integer", statusDoc["numberReady"]),
		column("Up-to-date", "integer", statusDoc["updatedNumberScheduled"]),
		column("Available", "integer", statusDoc["numberAvailable"]),
		column("Node Selector", "string", corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]),
		ageColumn(),
		wide("Containers", "string", containersDescription),
		wide("Images", "string", imagesDescription),
		wide("Selector", "string", extensionsv1beta1.DaemonSetSpec{}.SwaggerDoc()["selector"]),
	), func(obj *appsv1.DaemonSet, now time.Time) []interface{} {
		s := obj.Status
		names, images := containerCells(obj.Spec.Template.Spec.Containers)
		return []interface{}{
			obj.Name, int64(s.DesiredNumberScheduled), int64(s.CurrentNumberScheduled), int64(s.NumberReady),
			int64(s.UpdatedNumberScheduled), int64(s.NumberAvailable), labels.FormatLabels(obj.Spec.Template.Spec.NodeSelector),
			since(obj.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(obj.Spec.Selector),
		}
	})
}

func controllerRevisionPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("Controller", "string", "Controller of the object"),
		column("Revision", "string", appsv1beta1.ControllerRevision{}.SwaggerDoc()["revision"]),
		ageColumn(),
	), func(obj *appsv1.ControllerRevision, now time.Time) []interface{} {
		controller := "<none>"
		if ref := metav1.GetControllerOf(obj); ref != nil {
			controller = ref.Name
			if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil {
				if gk := gv.WithKind(ref.Kind).GroupKind(); !gk.Empty() {
					controller = strings.ToLower(gk.String()) + "/" + ref.Name
				}
			}
		}
		return []interface{}{obj.Name, controller, obj.Revision, since(obj.CreationTimestamp, now)}
	})
}

// --- batch ---

func jobPrinter() *Printer {
	return typed(cols(
		nameColumn(),
		column("Status", "string", "Status of the job."),
		column("Completions", "string", batchv1.JobStatus{}.SwaggerDoc()["succeeded"]),
		column("Duration", "string", "Time required to complete the job."),
		ageColumn(),
		wide("Containers", "string", containersDescription),
		wide("Images", "string", imagesDescription),
		wide("Selector", "string", batchv1.JobSpec{}.SwaggerDoc()["selector"]),
	), printJob)
}

func printJob(obj *batchv1.Job, now time.Time) []interface{} {
	var completions string
	if obj.Spec.Completions != nil {
		completions = fmt.Sprintf("%d/%d", obj.Status.Succeeded, *obj.Spec.Completions)
	} else if parallelism := deref(obj.Spec.Parallelism); parallelism > 1 {
		completions = fmt.Sprintf("%d/1 of %d", obj.Status.Succeeded, parallelism)
	} else {
		completions = fmt.Sprintf("%d/1", obj.Status.Succeeded)
	}

	var jobDuration string
	switch {
	case obj.Status.StartTime == nil:
	case obj.Status.CompletionTime == nil:
		jobDuration = duration.HumanDuration(now.Sub(obj.Status.StartTime.Time))
	default:
		jobDuration = duration.HumanDuration(obj.Status.CompletionTime.Sub(obj.Status.StartTime.Time))
	}

	var status string
	switch {
	case jobCondition(obj.Status.Conditions, batchv1.JobComplete):
		status = "Complete"
	case jobCondition(obj.Status.Conditions, batchv1.JobFailed):
		status = "Failed"
	case obj.DeletionTimestamp != nil:
		status = "Terminating"
	case jobCondition(obj.Status.Conditions, batchv1.JobSuspended):
		status = "Suspended"
	case jobCondition(obj.Status.Conditions, batchv1.JobFailureTarget):
		status = "FailureTarget"
	case jobCondition(obj.Status.Conditions, batchv1.JobSuccessCriteriaMet):
		status = "SuccessCriteriaMet"
	default:
		status = "Running"
	}

	names, images := containerCells(obj.Spec.Template.Spec.Containers)
	return []interface{}{
		obj.Name, status, completions, jobDuration, since(obj.CreationTimestamp, now),
		names, images, metav1.FormatLabelSelector(obj.Spec.Selector),
	}
}

// jobCondition tells whether the first condition of type t is True.
func jobCondition(conditions []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for _, c := range conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func cronJobPrinter() *Printer {
	specDoc := batchv1beta1.CronJobSpec{}.SwaggerDoc()
	statusDoc := batchv1beta1.CronJobStatus{}.SwaggerDoc()
	return typed(cols(
		nameColumn(),
		column("Schedule", "string", specDoc["schedule"]),
		column("Timezone", "string", specDoc["timeZone"]),
		column("Suspend", "boolean", specDoc["suspend"]),
		column("Active", "integer", statusDoc["active"]),
		column("Last Schedule", "string", statusDoc["lastScheduleTime"]),
		ageColumn(),
		wide("Containers", "string", containersDescription),
		wide("Images", "string", imagesDescription),
		wide("Selector", "string", batchv1.JobSpec{}.SwaggerDoc()["selector"]),
	), func(obj *batchv1.CronJob, now time.Time) []interface{} {
		lastSchedule := "<none>"
		if obj.Status.LastScheduleTime != nil {
			lastSchedule = since(*obj.Status.LastScheduleTime, now)
		}
		timeZone := "<none>"
		if obj.Spec.TimeZone != nil {
			timeZone = *obj.Spec.TimeZone
		}
		jobSpec := obj.Spec.JobTemplate.Spec
		names, images := containerCells(jobSpec.Template.Spec.Containers)
		return []interface{}{
			obj.Name, obj.Spec.Schedule, timeZone, boolPtrString(obj.Spec.Suspend), int64(len(obj.Status.Active)),
			lastSchedule, since(obj.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(jobSpec.Selector),
		}
	})
}

// boolPtrString prints "True", "False" or "<unset>".
func boolPtrString(b *bool) string {
	switch {
	case b == nil:
		return "<unset>"
	case *b:
		return "True"
	}
	return "False"
}
