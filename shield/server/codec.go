package server

import (
	"fmt"
	"sync"

	"google.golang.org/grpc/encoding"
	protocodec "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

// Codec returns the server's message codec: grpc's proto codec, except that an EvaluateRequest
// whose only fault is invalid UTF-8 in a string field is decoded anyway (keeping the bytes as
// received) instead of failing in grpc with INTERNAL before any handler or interceptor runs. The
// Evaluate handler then rejects the call like any other malformed call: INVALID_ARGUMENT naming
// the field, and a BLOCK in the audit trail. Install it with grpc.ForceServerCodecV2.
func Codec() encoding.CodecV2 {
	return lenientCodec{base: encoding.GetCodecV2(protocodec.Name)}
}

type lenientCodec struct{ base encoding.CodecV2 }

func (c lenientCodec) Name() string                           { return c.base.Name() }
func (c lenientCodec) Marshal(v any) (mem.BufferSlice, error) { return c.base.Marshal(v) }

func (c lenientCodec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.base.Unmarshal(data, v)
	req, ok := v.(*shieldv1.EvaluateRequest)
	if err == nil || !ok {
		return err
	}
	// The strict decoder failed. The lenient one differs from it only in not checking UTF-8, so
	// if it succeeds, invalid UTF-8 was the fault; if it fails too, the strict error stands. So
	// does it when the decoded request holds no invalid UTF-8 (the bad string was a repeated
	// field occurrence that a later one replaced): that request is refused as grpc refuses it.
	if lerr := unmarshalLenient(data.Materialize(), req); lerr != nil {
		proto.Reset(req)
		return err
	}
	if _, merr := proto.Marshal(req); merr == nil {
		proto.Reset(req)
		return err
	}
	return nil
}

var lenient struct {
	once sync.Once
	desc protoreflect.MessageDescriptor
	err  error
}

// unmarshalLenient decodes b into req without UTF-8 validation: through a proto2 copy of
// shield.proto (proto2 strings are not validated), then field by field into req.
func unmarshalLenient(b []byte, req *shieldv1.EvaluateRequest) (err error) {
	// The codec runs in grpc's transport, before any interceptor: a panic here would end the
	// process. The dynamic decoder has panicked on hostile map entries (FuzzCodec); any panic is
	// a failed lenient decode, and the strict decoder's error stands.
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("lenient decode: %v", x)
		}
	}()
	lenient.once.Do(func() { lenient.desc, lenient.err = lenientDescriptor(req.ProtoReflect().Descriptor()) })
	if lenient.err != nil {
		return lenient.err
	}
	dyn := dynamicpb.NewMessage(lenient.desc)
	if err := proto.Unmarshal(b, dyn); err != nil {
		return err
	}
	proto.Reset(req)
	copyMessage(req.ProtoReflect(), dyn)
	return nil
}

// lenientDescriptor returns md's twin in a proto2 copy of md's file.
func lenientDescriptor(md protoreflect.MessageDescriptor) (protoreflect.MessageDescriptor, error) {
	fdp := protodesc.ToFileDescriptorProto(md.ParentFile())
	fdp.Name = proto.String(fdp.GetName() + ".lenient")
	fdp.Syntax = proto.String("proto2")
	fdp.Service = nil
	for _, m := range fdp.MessageType {
		toProto2(m)
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		return nil, fmt.Errorf("lenient descriptor of %s: %w", md.FullName(), err)
	}
	out := fd.Messages().ByName(md.Name())
	if out == nil {
		return nil, fmt.Errorf("lenient descriptor of %s: message missing", md.FullName())
	}
	return out, nil
}

// toProto2 turns proto3 optional fields into proto2 optional ones (dropping their synthetic
// oneofs), in m and its nested messages.
func toProto2(m *descriptorpb.DescriptorProto) {
	synthetic := map[int32]bool{}
	for _, f := range m.Field {
		if f.GetProto3Optional() {
			synthetic[f.GetOneofIndex()] = true
		}
	}
	// Real oneofs keep their positions relative to each other.
	remap := map[int32]int32{}
	var kept []*descriptorpb.OneofDescriptorProto
	for i, o := range m.OneofDecl {
		if !synthetic[int32(i)] {
			remap[int32(i)] = int32(len(kept))
			kept = append(kept, o)
		}
	}
	m.OneofDecl = kept
	for _, f := range m.Field {
		switch {
		case f.GetProto3Optional():
			f.Proto3Optional, f.OneofIndex = nil, nil
		case f.OneofIndex != nil:
			f.OneofIndex = proto.Int32(remap[f.GetOneofIndex()])
		}
	}
	for _, n := range m.NestedType {
		toProto2(n)
	}
}

// copyMessage copies src (a lenient twin) into dst field by field; values are stored as they
// are, UTF-8 or not.
func copyMessage(dst, src protoreflect.Message) {
	fields := dst.Descriptor().Fields()
	src.Range(func(sfd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		fd := fields.ByNumber(sfd.Number())
		if fd == nil {
			return true
		}
		switch {
		case fd.IsMap():
			m := dst.Mutable(fd).Map()
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if fd.MapValue().Message() != nil {
					nv := m.NewValue()
					copyMessage(nv.Message(), mv.Message())
					mv = nv
				}
				m.Set(k, mv)
				return true
			})
		case fd.IsList():
			l, sl := dst.Mutable(fd).List(), v.List()
			for i := range sl.Len() {
				e := sl.Get(i)
				if fd.Message() != nil {
					ne := l.NewElement()
					copyMessage(ne.Message(), e.Message())
					e = ne
				}
				l.Append(e)
			}
		case fd.Message() != nil:
			copyMessage(dst.Mutable(fd).Message(), v.Message())
		default:
			dst.Set(fd, v)
		}
		return true
	})
	if u := src.GetUnknown(); len(u) > 0 {
		dst.SetUnknown(u)
	}
}
