package cache

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/features"
	kstorage "k8s.io/apiserver/pkg/storage"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// APIError turns an error of the cache into the Status kube-apiserver
// answers for it; other errors are returned as they are.
func APIError(err error) error {
	switch e := err.(type) {
	case *ErrTooLarge:
		status := apierrors.NewTimeoutError(e.Error(), 1)
		status.ErrStatus.Details.Causes = []metav1.StatusCause{{
			Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version",
		}}
		return status
	case *ErrGone:
		status := apierrors.NewResourceExpired(e.Message)
		status.ErrStatus.ListMeta.Continue = e.Continue
		return status
	case *ErrExpired:
		return apierrors.NewResourceExpired(e.Error())
	case *ErrUnready:
		return apierrors.NewTooManyRequests(e.Error(), 1)
	case *ErrCorrupt:
		return e.status()
	}
	return err
}

// ErrCorrupt means a list met objects whose stored bytes cannot be
// decoded.
type ErrCorrupt struct {
	Resource schema.GroupResource
	Errs     []error
}

func (e *ErrCorrupt) Error() string { return e.status().Error() }

// maxCorruptReported bounds the objects a list's error names, as
// kube-apiserver's.
const maxCorruptReported = 100

// status is kube-apiserver's answer: with AllowUnsafeMalformedObjectDeletion,
// a StorageReadError naming every corrupt object (up to a hundred), so that
// an administrator can delete them; without it, the first decoding error.
func (e *ErrCorrupt) status() *apierrors.StatusError {
	if !utilfeature.DefaultFeatureGate.Enabled(features.AllowUnsafeMalformedObjectDeletion) {
		return apierrors.NewInternalError(e.Errs[0])
	}
	errs := e.Errs
	var causes []metav1.StatusCause
	for i, err := range errs {
		if i == maxCorruptReported {
			causes = append(causes, metav1.StatusCause{
				Type: metav1.CauseTypeTooMany, Message: "too many errors, the list is truncated",
			})
			break
		}
		cause := metav1.StatusCause{Type: metav1.CauseTypeUnexpectedServerResponse, Message: err.Error()}
		if se, ok := err.(*kstorage.StorageError); ok {
			cause.Field = se.Key
		}
		causes = append(causes, cause)
	}
	message := fmt.Sprintf("failed to read one or more %s from the storage: %v", e.Resource.String(), errs[0])
	if len(errs) > 1 {
		message = fmt.Sprintf("%s (and %d more)", message, len(errs)-1)
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Reason:  metav1.StatusReasonStoreReadError,
		Details: &metav1.StatusDetails{Group: e.Resource.Group, Kind: e.Resource.Resource, Name: "list", Causes: causes},
		Message: message,
	}}
}
