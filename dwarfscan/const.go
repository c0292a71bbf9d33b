package dwarfscan

// Tag is a DW_TAG_* value.
type Tag uint32

// Attr is a DW_AT_* value.
type Attr uint32

// Form is a DW_FORM_* value.
type Form uint32

// Tags (DWARF 5, section 7.5.3).
const (
	TagArrayType              Tag = 0x01
	TagClassType              Tag = 0x02
	TagEntryPoint             Tag = 0x03
	TagEnumerationType        Tag = 0x04
	TagFormalParameter        Tag = 0x05
	TagImportedDeclaration    Tag = 0x08
	TagLabel                  Tag = 0x0a
	TagLexicalBlock           Tag = 0x0b
	TagMember                 Tag = 0x0d
	TagPointerType            Tag = 0x0f
	TagReferenceType          Tag = 0x10
	TagCompileUnit            Tag = 0x11
	TagStringType             Tag = 0x12
	TagStructType             Tag = 0x13
	TagSubroutineType         Tag = 0x15
	TagTypedef                Tag = 0x16
	TagUnionType              Tag = 0x17
	TagUnspecifiedParameters  Tag = 0x18
	TagVariant                Tag = 0x19
	TagCommonBlock            Tag = 0x1a
	TagCommonInclusion        Tag = 0x1b
	TagInheritance            Tag = 0x1c
	TagInlinedSubroutine      Tag = 0x1d
	TagModule                 Tag = 0x1e
	TagPtrToMemberType        Tag = 0x1f
	TagSetType                Tag = 0x20
	TagSubrangeType           Tag = 0x21
	TagWithStmt               Tag = 0x22
	TagAccessDeclaration      Tag = 0x23
	TagBaseType               Tag = 0x24
	TagCatchBlock             Tag = 0x25
	TagConstType              Tag = 0x26
	TagConstant               Tag = 0x27
	TagEnumerator             Tag = 0x28
	TagFileType               Tag = 0x29
	TagFriend                 Tag = 0x2a
	TagNamelist               Tag = 0x2b
	TagNamelistItem           Tag = 0x2c
	TagPackedType             Tag = 0x2d
	TagSubprogram             Tag = 0x2e
	TagTemplateTypeParameter  Tag = 0x2f
	TagTemplateValueParameter Tag = 0x30
	TagThrownType             Tag = 0x31
	TagTryBlock               Tag = 0x32
	TagVariantPart            Tag = 0x33
	TagVariable               Tag = 0x34
	TagVolatileType           Tag = 0x35
	TagDwarfProcedure         Tag = 0x36
	TagRestrictType           Tag = 0x37
	TagInterfaceType          Tag = 0x38
	TagNamespace              Tag = 0x39
	TagImportedModule         Tag = 0x3a
	TagUnspecifiedType        Tag = 0x3b
	TagPartialUnit            Tag = 0x3c
	TagImportedUnit           Tag = 0x3d
	TagCondition              Tag = 0x3f
	TagSharedType             Tag = 0x40
	TagTypeUnit               Tag = 0x41
	TagRvalueReferenceType    Tag = 0x42
	TagTemplateAlias          Tag = 0x43
	TagCoarrayType            Tag = 0x44
	TagGenericSubrange        Tag = 0x45
	TagDynamicType            Tag = 0x46
	TagAtomicType             Tag = 0x47
	TagCallSite               Tag = 0x48
	TagCallSiteParameter      Tag = 0x49
	TagSkeletonUnit           Tag = 0x4a
	TagImmutableType          Tag = 0x4b
	TagGNUCallSite            Tag = 0x4109
	TagGNUCallSiteParameter   Tag = 0x410a
)

// Attributes (DWARF 5, section 7.5.4, and the GNU extensions bloop meets).
const (
	AttrSibling              Attr = 0x01
	AttrLocation             Attr = 0x02
	AttrName                 Attr = 0x03
	AttrOrdering             Attr = 0x09
	AttrByteSize             Attr = 0x0b
	AttrBitOffset            Attr = 0x0c
	AttrBitSize              Attr = 0x0d
	AttrStmtList             Attr = 0x10
	AttrLowPC                Attr = 0x11
	AttrHighPC               Attr = 0x12
	AttrLanguage             Attr = 0x13
	AttrDiscr                Attr = 0x15
	AttrDiscrValue           Attr = 0x16
	AttrVisibility           Attr = 0x17
	AttrImport               Attr = 0x18
	AttrStringLength         Attr = 0x19
	AttrCommonReference      Attr = 0x1a
	AttrCompDir              Attr = 0x1b
	AttrConstValue           Attr = 0x1c
	AttrContainingType       Attr = 0x1d
	AttrDefaultValue         Attr = 0x1e
	AttrInline               Attr = 0x20
	AttrIsOptional           Attr = 0x21
	AttrLowerBound           Attr = 0x22
	AttrProducer             Attr = 0x25
	AttrPrototyped           Attr = 0x27
	AttrReturnAddr           Attr = 0x2a
	AttrStartScope           Attr = 0x2c
	AttrBitStride            Attr = 0x2e
	AttrUpperBound           Attr = 0x2f
	AttrAbstractOrigin       Attr = 0x31
	AttrAccessibility        Attr = 0x32
	AttrAddressClass         Attr = 0x33
	AttrArtificial           Attr = 0x34
	AttrBaseTypes            Attr = 0x35
	AttrCallingConvention    Attr = 0x36
	AttrCount                Attr = 0x37
	AttrDataMemberLocation   Attr = 0x38
	AttrDeclColumn           Attr = 0x39
	AttrDeclFile             Attr = 0x3a
	AttrDeclLine             Attr = 0x3b
	AttrDeclaration          Attr = 0x3c
	AttrDiscrList            Attr = 0x3d
	AttrEncoding             Attr = 0x3e
	AttrExternal             Attr = 0x3f
	AttrFrameBase            Attr = 0x40
	AttrFriend               Attr = 0x41
	AttrIdentifierCase       Attr = 0x42
	AttrMacroInfo            Attr = 0x43
	AttrNamelistItem         Attr = 0x44
	AttrPriority             Attr = 0x45
	AttrSegment              Attr = 0x46
	AttrSpecification        Attr = 0x47
	AttrStaticLink           Attr = 0x48
	AttrType                 Attr = 0x49
	AttrUseLocation          Attr = 0x4a
	AttrVariableParameter    Attr = 0x4b
	AttrVirtuality           Attr = 0x4c
	AttrVtableElemLocation   Attr = 0x4d
	AttrAllocated            Attr = 0x4e
	AttrAssociated           Attr = 0x4f
	AttrDataLocation         Attr = 0x50
	AttrByteStride           Attr = 0x51
	AttrEntryPC              Attr = 0x52
	AttrUseUTF8              Attr = 0x53
	AttrExtension            Attr = 0x54
	AttrRanges               Attr = 0x55
	AttrTrampoline           Attr = 0x56
	AttrCallColumn           Attr = 0x57
	AttrCallFile             Attr = 0x58
	AttrCallLine             Attr = 0x59
	AttrDescription          Attr = 0x5a
	AttrBinaryScale          Attr = 0x5b
	AttrDecimalScale         Attr = 0x5c
	AttrSmall                Attr = 0x5d
	AttrDecimalSign          Attr = 0x5e
	AttrDigitCount           Attr = 0x5f
	AttrPictureString        Attr = 0x60
	AttrMutable              Attr = 0x61
	AttrThreadsScaled        Attr = 0x62
	AttrExplicit             Attr = 0x63
	AttrObjectPointer        Attr = 0x64
	AttrEndianity            Attr = 0x65
	AttrElemental            Attr = 0x66
	AttrPure                 Attr = 0x67
	AttrRecursive            Attr = 0x68
	AttrSignature            Attr = 0x69
	AttrMainSubprogram       Attr = 0x6a
	AttrDataBitOffset        Attr = 0x6b
	AttrConstExpr            Attr = 0x6c
	AttrEnumClass            Attr = 0x6d
	AttrLinkageName          Attr = 0x6e
	AttrStringLengthBitSize  Attr = 0x6f
	AttrStringLengthByteSize Attr = 0x70
	AttrRank                 Attr = 0x71
	AttrStrOffsetsBase       Attr = 0x72
	AttrAddrBase             Attr = 0x73
	AttrRnglistsBase         Attr = 0x74
	AttrDwoName              Attr = 0x76
	AttrReference            Attr = 0x77
	AttrRvalueReference      Attr = 0x78
	AttrMacros               Attr = 0x79
	AttrCallAllCalls         Attr = 0x7a
	AttrCallAllSourceCalls   Attr = 0x7b
	AttrCallAllTailCalls     Attr = 0x7c
	AttrCallReturnPC         Attr = 0x7d
	AttrCallValue            Attr = 0x7e
	AttrCallOrigin           Attr = 0x7f
	AttrCallParameter        Attr = 0x80
	AttrCallPC               Attr = 0x81
	AttrCallTailCall         Attr = 0x82
	AttrCallTarget           Attr = 0x83
	AttrCallTargetClobbered  Attr = 0x84
	AttrCallDataLocation     Attr = 0x85
	AttrCallDataValue        Attr = 0x86
	AttrNoreturn             Attr = 0x87
	AttrAlignment            Attr = 0x88
	AttrExportSymbols        Attr = 0x89
	AttrDeleted              Attr = 0x8a
	AttrDefaulted            Attr = 0x8b
	AttrLoclistsBase         Attr = 0x8c

	AttrMIPSLinkageName     Attr = 0x2007
	AttrGNUCallSiteValue    Attr = 0x2111
	AttrGNUCallSiteTarget   Attr = 0x2113
	AttrGNUTailCall         Attr = 0x2115
	AttrGNUAllTailCallSites Attr = 0x2116
	AttrGNUAllCallSites     Attr = 0x2117
	AttrGNUMacros           Attr = 0x2119
	AttrGNUDwoName          Attr = 0x2130
	AttrGNUDwoID            Attr = 0x2131
	AttrGNURangesBase       Attr = 0x2132
	AttrGNUAddrBase         Attr = 0x2133
	AttrGNUDiscriminator    Attr = 0x2136
	AttrGNULocviews         Attr = 0x2137
	AttrGNUEntryView        Attr = 0x2138
)

// Forms (DWARF 5, section 7.5.6, and the GNU forms of split and
// supplementary DWARF).
const (
	FormAddr          Form = 0x01
	FormBlock2        Form = 0x03
	FormBlock4        Form = 0x04
	FormData2         Form = 0x05
	FormData4         Form = 0x06
	FormData8         Form = 0x07
	FormString        Form = 0x08
	FormBlock         Form = 0x09
	FormBlock1        Form = 0x0a
	FormData1         Form = 0x0b
	FormFlag          Form = 0x0c
	FormSdata         Form = 0x0d
	FormStrp          Form = 0x0e
	FormUdata         Form = 0x0f
	FormRefAddr       Form = 0x10
	FormRef1          Form = 0x11
	FormRef2          Form = 0x12
	FormRef4          Form = 0x13
	FormRef8          Form = 0x14
	FormRefUdata      Form = 0x15
	FormIndirect      Form = 0x16
	FormSecOffset     Form = 0x17
	FormExprloc       Form = 0x18
	FormFlagPresent   Form = 0x19
	FormStrx          Form = 0x1a
	FormAddrx         Form = 0x1b
	FormRefSup4       Form = 0x1c
	FormStrpSup       Form = 0x1d
	FormData16        Form = 0x1e
	FormLineStrp      Form = 0x1f
	FormRefSig8       Form = 0x20
	FormImplicitConst Form = 0x21
	FormLoclistx      Form = 0x22
	FormRnglistx      Form = 0x23
	FormRefSup8       Form = 0x24
	FormStrx1         Form = 0x25
	FormStrx2         Form = 0x26
	FormStrx3         Form = 0x27
	FormStrx4         Form = 0x28
	FormAddrx1        Form = 0x29
	FormAddrx2        Form = 0x2a
	FormAddrx3        Form = 0x2b
	FormAddrx4        Form = 0x2c
	FormGNUAddrIndex  Form = 0x1f01
	FormGNUStrIndex   Form = 0x1f02
	FormGNURefAlt     Form = 0x1f20
	FormGNUStrpAlt    Form = 0x1f21
)

// Unit types (DWARF 5, section 7.5.1).
const (
	UTCompile      = 0x01
	UTType         = 0x02
	UTPartial      = 0x03
	UTSkeleton     = 0x04
	UTSplitCompile = 0x05
	UTSplitType    = 0x06
)

// Class tells how a Field's Val and Str are to be read.
type Class uint8

const (
	ClassUnknown Class = iota
	// ClassString: Str is the string.
	ClassString
	// ClassAddress: Val is the address (DW_FORM_addrx* resolved through .debug_addr).
	ClassAddress
	// ClassConstant: Val is the value, sign-extended for sdata and
	// implicit_const, zero-extended for data1-8 and udata; for data16, Val
	// holds the low 8 bytes and Str all 16 bytes.
	ClassConstant
	// ClassFlag: Val is 1 or 0. Any non-zero DW_FORM_flag byte is 1
	// (debug/dwarf takes only 1 as true; DWARF says non-zero).
	ClassFlag
	// ClassReference: Val is an absolute .debug_info offset, also for
	// the unit-relative forms ref1-8 and ref_udata.
	ClassReference
	// ClassTypeRef: Val is the 8-byte signature of a type unit (ref_sig8).
	ClassTypeRef
	// ClassSecOffset: Val is an offset into the section the attribute
	// names (line, loclist, rangelist, macro, str_offsets, addr pointers):
	// DW_FORM_sec_offset, and data4/data8 for those attributes before
	// DWARF 4. (debug/dwarf also calls data1, data2 and udata of those
	// attributes pointers before DWARF 4; here they are constants.)
	ClassSecOffset
	// ClassRngList: Val is the DW_FORM_rnglistx index, unresolved
	// (debug/dwarf resolves it to an offset while decoding); Data.Ranges
	// resolves it.
	ClassRngList
	// ClassLocList: Val is a DW_FORM_loclistx index.
	ClassLocList
	// ClassBlock: Str holds the block's bytes, Val their .debug_info offset.
	ClassBlock
	// ClassExprLoc: a DWARF expression, stored as for ClassBlock.
	ClassExprLoc
	// ClassUnresolved: a form that refers into a supplementary object
	// file (GNU_ref_alt, GNU_strp_alt, ref_sup4/8, strp_sup). Val is the
	// raw offset in that file; it is not resolved. (debug/dwarf calls
	// strp_sup a string and ref_sup a reference, with the same raw value.)
	ClassUnresolved
)

var classNames = [...]string{"unknown", "string", "address", "constant", "flag", "reference",
	"typeref", "secoffset", "rnglist", "loclist", "block", "exprloc", "unresolved"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "Class(" + itoa(uint64(c)) + ")"
}

func itoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// exprlocAttrs are the attributes whose block forms hold a DWARF
// expression (DWARF 2 and 3 had no exprloc form).
func exprlocAttr(a Attr) bool {
	switch a {
	case AttrLocation, AttrByteSize, AttrBitOffset, AttrBitSize, AttrStringLength,
		AttrLowerBound, AttrReturnAddr, AttrBitStride, AttrUpperBound, AttrCount,
		AttrDataMemberLocation, AttrFrameBase, AttrSegment, AttrStaticLink,
		AttrUseLocation, AttrVtableElemLocation, AttrAllocated, AttrAssociated,
		AttrDataLocation, AttrByteStride:
		return true
	}
	return false
}

// ptrAttr reports whether data4/data8 of attribute a is an offset into
// another section in DWARF 2 and 3 (DWARF 3, section 7.5.4).
func ptrAttr(a Attr) bool {
	switch a {
	case AttrLocation, AttrStmtList, AttrStringLength, AttrReturnAddr, AttrStartScope,
		AttrDataMemberLocation, AttrFrameBase, AttrMacroInfo, AttrSegment,
		AttrStaticLink, AttrUseLocation, AttrVtableElemLocation, AttrRanges:
		return true
	}
	return false
}

// formClass gives the class of form f for attribute a in a unit of
// version vers; ok is false for an unknown form.
func formClass(f Form, a Attr, vers int) (c Class, ok bool) {
	switch f {
	case FormAddr, FormAddrx, FormAddrx1, FormAddrx2, FormAddrx3, FormAddrx4, FormGNUAddrIndex:
		return ClassAddress, true
	case FormBlock1, FormBlock2, FormBlock4, FormBlock:
		if exprlocAttr(a) {
			return ClassExprLoc, true
		}
		return ClassBlock, true
	case FormData4, FormData8:
		if vers < 4 && ptrAttr(a) {
			return ClassSecOffset, true
		}
		return ClassConstant, true
	case FormData1, FormData2, FormData16, FormSdata, FormUdata, FormImplicitConst:
		return ClassConstant, true
	case FormFlag, FormFlagPresent:
		return ClassFlag, true
	case FormRefAddr, FormRef1, FormRef2, FormRef4, FormRef8, FormRefUdata:
		return ClassReference, true
	case FormRefSig8:
		return ClassTypeRef, true
	case FormString, FormStrp, FormLineStrp, FormStrx, FormStrx1, FormStrx2, FormStrx3,
		FormStrx4, FormGNUStrIndex:
		return ClassString, true
	case FormSecOffset:
		return ClassSecOffset, true
	case FormExprloc:
		return ClassExprLoc, true
	case FormLoclistx:
		return ClassLocList, true
	case FormRnglistx:
		return ClassRngList, true
	case FormRefSup4, FormRefSup8, FormStrpSup, FormGNURefAlt, FormGNUStrpAlt:
		return ClassUnresolved, true
	case FormIndirect:
		return ClassUnknown, true // known only per entry
	}
	return ClassUnknown, false
}
