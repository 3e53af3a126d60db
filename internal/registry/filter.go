package registry

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/cache"
)

// Filter is the cache filter of a list or watch of the resource: a
// namespace ("" for all) and label and field selectors (nil selects
// everything). Field selectors are in the resource's own form (see
// resources.Info.ConvertFieldSelector).
func (s *Store) Filter(namespace string, labelSel labels.Selector, fieldSel fields.Selector) cache.Filter {
	filter := cache.Filter{Prefix: s.CollectionPrefix(namespace)}
	if labelSel == nil {
		labelSel = labels.Everything()
	}
	if fieldSel == nil {
		fieldSel = fields.Everything()
	}
	if labelSel.Empty() && fieldSel.Empty() {
		return filter
	}
	info := s.Info
	// A selector of one name reads that object's key alone, as
	// kube-apiserver's cache does (a watch of one object among 10,000
	// starts without passing over the others); Match still applies.
	if name, ok := fieldSel.RequiresExactMatch("metadata.name"); ok && (namespace != "" || !info.Namespaced) {
		filter.Prefix = s.Key(namespace, name)
	}
	filter.Match = func(obj runtime.Object) bool {
		m, err := meta.Accessor(obj)
		if err != nil {
			return false
		}
		if !labelSel.Matches(labels.Set(m.GetLabels())) {
			return false
		}
		return fieldSel.Empty() || fieldSel.Matches(info.FieldsOf(obj))
	}
	return filter
}
