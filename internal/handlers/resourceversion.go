package handlers

import (
	"math"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kstorage "k8s.io/apiserver/pkg/storage"
)

// storageRevision reads a resourceVersion as kube-apiserver's storage
// does: "" and "0" are 0, and anything but an unsigned decimal number is
// its storage.InvalidError, "resourceVersion: Invalid value: ...". Nothing
// makes a Status of that error on a watch or a get, so kube-apiserver
// answers it as any such error: 500, no reason, the error's text. A
// version past the largest revision is one still to come.
func storageRevision(rv string) (int64, error) {
	n, err := kstorage.APIObjectVersioner{}.ParseResourceVersion(rv)
	if err != nil {
		return 0, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: err.Error(),
		}}
	}
	return int64(min(n, math.MaxInt64)), nil
}
