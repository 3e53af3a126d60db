package registry

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// Storage in protobuf does not tell an empty list or map from none: both
// are encoded as nothing and decoded as nil. kube-apiserver answers a
// write with the object it decodes from what it stored, so a ClusterRole
// created with `rules: []` is answered, as every later read shows it, with
// `rules: null`. A field whose JSON tag has omitempty hides the
// difference; clearEmptyCollections clears the others, walking only the
// parts of a type that can hold one (for a pod: its containers).
func clearEmptyCollections(obj any) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return
	}
	if p := planOf(v.Elem().Type()); p != nil {
		p.clear(v.Elem())
	}
}

// collectionPlan lists the fields of a struct type that are, or lead to,
// a collection JSON shows empty.
type collectionPlan struct {
	fields []collectionField
}

type collectionField struct {
	index int
	// bare: the field is a slice or map whose JSON tag has no omitempty.
	bare bool
	// within is the plan of the structs the field holds (itself, through a
	// pointer, or as a slice's items), nil when they hold nothing to clear.
	within *collectionPlan
}

var collectionPlans sync.Map // reflect.Type -> *collectionPlan (nil: nothing to clear)

func planOf(t reflect.Type) *collectionPlan {
	if p, ok := collectionPlans.Load(t); ok {
		return p.(*collectionPlan)
	}
	built := map[reflect.Type]*collectionPlan{}
	p := buildPlan(t, built)
	prune(built)
	if p != nil && len(p.fields) == 0 {
		p = nil
	}
	collectionPlans.Store(t, p)
	return p
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

// buildPlan makes the plan of struct type t. built holds the plans made
// so far, those still being made among them, so that a type holding
// itself (a JSON schema's properties) ends.
func buildPlan(t reflect.Type, built map[reflect.Type]*collectionPlan) *collectionPlan {
	if t.Kind() != reflect.Struct || t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
		return nil // its JSON is its own (times, quantities, raw extensions)
	}
	if p, ok := built[t]; ok {
		return p
	}
	p := &collectionPlan{}
	built[t] = p
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		field := collectionField{index: i}
		switch f.Type.Kind() {
		case reflect.Slice:
			field.bare = !strings.Contains(opts, "omitempty") && f.Type.Elem().Kind() != reflect.Uint8
			field.within = buildPlan(indirect(f.Type.Elem()), built)
		case reflect.Map:
			field.bare = !strings.Contains(opts, "omitempty")
		case reflect.Struct, reflect.Pointer:
			field.within = buildPlan(indirect(f.Type), built)
		}
		if field.bare || field.within != nil {
			p.fields = append(p.fields, field)
		}
	}
	return p
}

// prune drops the fields that lead to no bare collection, until none is
// left to drop: a type that only holds itself is not walked.
func prune(built map[reflect.Type]*collectionPlan) {
	for changed := true; changed; {
		changed = false
		for _, p := range built {
			kept := p.fields[:0]
			for _, f := range p.fields {
				if f.within != nil && len(f.within.fields) == 0 {
					f.within = nil
				}
				if f.bare || f.within != nil {
					kept = append(kept, f)
				}
			}
			changed = changed || len(kept) != len(p.fields)
			p.fields = kept
		}
	}
}

func indirect(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// clear clears the empty bare collections of v, an addressable struct of
// the plan's type.
func (p *collectionPlan) clear(v reflect.Value) {
	for _, f := range p.fields {
		fv := v.Field(f.index)
		switch fv.Kind() {
		case reflect.Slice:
			if fv.Len() == 0 {
				if f.bare && !fv.IsNil() {
					fv.SetZero()
				}
				continue
			}
			if f.within != nil {
				for i := range fv.Len() {
					f.within.clearIn(fv.Index(i))
				}
			}
		case reflect.Map:
			if fv.Len() == 0 && !fv.IsNil() {
				fv.SetZero()
			}
		default:
			f.within.clearIn(fv)
		}
	}
}

// clearIn clears within v, a struct or a pointer to one.
func (p *collectionPlan) clearIn(v reflect.Value) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	p.clear(v)
}
