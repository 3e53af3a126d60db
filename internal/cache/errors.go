package cache

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	}
	return err
}
