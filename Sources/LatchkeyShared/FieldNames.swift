extension CaseIterable where Self: CodingKey {
    /// Every field name of a wire type (its `CodingKeys`): what a server reading it accepts, and
    /// nothing else. Here rather than beside the wire types, which `Latchkey` re-exports: an
    /// extension of every `CaseIterable` `CodingKey` would otherwise reach every app's own types.
    public static var fieldNames: Set<String> { Set(allCases.map(\.stringValue)) }
}
