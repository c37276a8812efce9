// COMPILE-ONLY STAND-IN for Apple's SwiftUI: it declares, with Apple's spellings, signatures, isolation
// and availability (https://developer.apple.com/documentation/swiftui: View, ViewBuilder, Button, Text,
// Image, AsyncImage, ProgressView, HStack, TextField, and the modifiers disabled, aspectRatio, scaledToFit,
// scaledToFill, clipped, accessibilityLabel, task), only what Sources/Latchkey/Apple uses, so the login
// button and the profile picture are type-checked on every Linux build (target
// LatchkeyAppleAdapterCheck). Nothing is drawn. Where Apple returns an opaque `some View` or a
// framework-private type, this returns its own wrapper: code that compiles here may still rely on a
// concrete type Apple does not promise, which is why the views stay a few lines over the model.
// Package.swift declares this target only when the manifest is built on Linux.

import Foundation
import Observation

/// Apple: `@MainActor @preconcurrency protocol View`; a part of an app's interface.
@MainActor
@preconcurrency
public protocol View {
    /// Apple: the type of view representing the body.
    associatedtype Body: View
    /// Apple: the content and behavior of the view.
    @ViewBuilder @MainActor @preconcurrency var body: Body { get }
}

extension Never: View {
    /// Apple: `Never` is the body of primitive views.
    public var body: Never { fatalError("primitive view") }
}

/// A primitive view of the stand-in (Apple's primitives have `Never` bodies too).
public protocol PrimitiveStandInView: View where Body == Never {}
extension PrimitiveStandInView {
    /// Primitive: no body.
    public var body: Never { fatalError("primitive view") }
}

/// Apple: `struct EmptyView`.
public struct EmptyView: PrimitiveStandInView {
    /// Apple: creates an empty view.
    nonisolated public init() {}
}

/// Apple: `struct TupleView<T>`; several views built together.
public struct TupleView<T>: PrimitiveStandInView {
    /// Apple: creates a tuple view (the stand-in keeps nothing).
    nonisolated public init(_ value: T) {}
}

/// Apple: `struct _ConditionalContent<TrueContent, FalseContent>`; one of two views.
public struct _ConditionalContent<TrueContent: View, FalseContent: View>: PrimitiveStandInView {
    nonisolated init(first: TrueContent?, second: FalseContent?) {}
}

extension Optional: View where Wrapped: View {
    /// Apple: an optional view is a view.
    public var body: Never { fatalError("primitive view") }
}

/// Apple: `@resultBuilder struct ViewBuilder`.
@resultBuilder
public struct ViewBuilder {
    /// Apple: an empty block.
    public static func buildBlock() -> EmptyView { EmptyView() }
    /// Apple: a block of one view.
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
    /// Apple: a block of several views.
    public static func buildBlock<each Content: View>(
        _ content: repeat each Content
    ) -> TupleView<(repeat each Content)> {
        TupleView((repeat each content))
    }
    /// Apple: an `if` without `else`.
    public static func buildIf<Content: View>(_ content: Content?) -> Content? { content }
    /// Apple: the first branch of an `if`/`else` or `switch`.
    public static func buildEither<TrueContent: View, FalseContent: View>(
        first: TrueContent
    )
        -> _ConditionalContent<TrueContent, FalseContent>
    {
        _ConditionalContent(first: first, second: nil)
    }
    /// Apple: the second branch.
    public static func buildEither<TrueContent: View, FalseContent: View>(
        second: FalseContent
    )
        -> _ConditionalContent<TrueContent, FalseContent>
    {
        _ConditionalContent(first: nil, second: second)
    }
    /// Apple: an expression.
    public static func buildExpression<Content: View>(_ content: Content) -> Content { content }
}

/// Apple: `struct Text`; displays read-only text.
public struct Text: PrimitiveStandInView {
    /// Apple: `init<S>(_ content: S) where S : StringProtocol`.
    nonisolated public init<S: StringProtocol>(_ content: S) {}
    /// Apple: `init(verbatim content: String)`.
    nonisolated public init(verbatim content: String) {}
}

/// Apple: `struct LocalizedStringKey`; a key looked up in the app's strings.
public struct LocalizedStringKey: Equatable, ExpressibleByStringInterpolation {
    /// Apple: creates a key from a string.
    public init(_ value: String) {}
    /// Apple: creates a key from a literal.
    public init(stringLiteral value: String) {}
}

extension Text {
    /// Apple: `init(_ key: LocalizedStringKey, tableName: String? = nil, bundle: Bundle? = nil, comment: StaticString? = nil)`.
    nonisolated public init(
        _ key: LocalizedStringKey, tableName: String? = nil, bundle: Bundle? = nil, comment: StaticString? = nil
    ) {}
}

/// Apple: `struct Color`; only `clear` is used.
public struct Color: PrimitiveStandInView, Hashable, Sendable {
    /// Apple: a transparent color.
    public static let clear = Color()
}

/// Apple: `struct Alignment`; only the default is used.
public struct Alignment: Equatable, Sendable {
    /// Apple: centered.
    public static let center = Alignment()
}

/// Apple: `struct Image`.
public struct Image: PrimitiveStandInView {
    /// Apple: `init(systemName: String)`, an SF Symbol.
    nonisolated public init(systemName: String) {}
    /// Apple: `func resizable(capInsets:resizingMode:) -> Image` (defaults only, here).
    nonisolated public func resizable() -> Image { self }
}

/// Apple: `enum ContentMode`.
public enum ContentMode: Hashable, CaseIterable, Sendable {
    /// Apple: fits inside the parent.
    case fit
    /// Apple: fills the parent.
    case fill
}

/// Apple: `struct Button<Label> where Label : View`.
public struct Button<Label: View>: PrimitiveStandInView {
    /// Apple: `init(action: @escaping @MainActor () -> Void, @ViewBuilder label: () -> Label)`.
    nonisolated public init(action: @escaping @MainActor () -> Void, @ViewBuilder label: () -> Label) {}
}

/// Apple: `struct ProgressView<Label, CurrentValueLabel>`.
public struct ProgressView<Label: View, CurrentValueLabel: View>: PrimitiveStandInView {}

extension ProgressView where Label == EmptyView, CurrentValueLabel == EmptyView {
    /// Apple: an indeterminate progress view.
    nonisolated public init() {}
}

/// Apple: `enum VerticalAlignment`-like struct; only the default is used.
public struct VerticalAlignment: Equatable, Sendable {
    /// Apple: centered.
    public static let center = VerticalAlignment()
}

/// Apple: `struct HStack<Content> where Content : View`.
public struct HStack<Content: View>: PrimitiveStandInView {
    /// Apple: `init(alignment:spacing:content:)`.
    nonisolated public init(
        alignment: VerticalAlignment = .center, spacing: CGFloat? = nil, @ViewBuilder content: () -> Content
    ) {}
}

/// Apple: `struct AsyncImage<Content> where Content : View`; loads and shows an image.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
public struct AsyncImage<Content: View>: PrimitiveStandInView {}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
extension AsyncImage {
    /// Apple: `init<I, P>(url:scale:content:placeholder:) where Content == _ConditionalContent<I, P>`.
    nonisolated public init<I: View, P: View>(
        url: URL?, scale: CGFloat = 1, @ViewBuilder content: @escaping (Image) -> I,
        @ViewBuilder placeholder: @escaping () -> P
    ) where Content == _ConditionalContent<I, P> {}
}

/// The stand-in's result for every modifier (Apple's are `some View` or `ModifiedContent`).
public struct ModifiedContent<Content: View, Modifier>: PrimitiveStandInView {
    nonisolated init(content: Content) {}
}

/// The stand-in's only modifier marker.
public struct StandInModifier {}

extension View {
    private func modified() -> ModifiedContent<Self, StandInModifier> { ModifiedContent(content: self) }

    /// Apple: `func disabled(_ disabled: Bool) -> some View`.
    public func disabled(_ disabled: Bool) -> some View { modified() }
    /// Apple: `func aspectRatio(_ aspectRatio: CGFloat? = nil, contentMode: ContentMode) -> some View`.
    public func aspectRatio(_ aspectRatio: CGFloat? = nil, contentMode: ContentMode) -> some View { modified() }
    /// Apple: `func overlay<V>(alignment: Alignment = .center, @ViewBuilder content: () -> V) -> some View where V : View`.
    @available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
    public func overlay<V: View>(alignment: Alignment = .center, @ViewBuilder content: () -> V) -> some View {
        modified()
    }
    /// Apple: `func scaledToFit() -> some View`.
    public func scaledToFit() -> some View { modified() }
    /// Apple: `func scaledToFill() -> some View`.
    public func scaledToFill() -> some View { modified() }
    /// Apple: `func clipped(antialiased: Bool = false) -> some View`.
    public func clipped(antialiased: Bool = false) -> some View { modified() }
    /// Apple: `func accessibilityLabel(_ label: Text) -> ModifiedContent<Self, AccessibilityAttachmentModifier>`.
    public func accessibilityLabel(_ label: Text) -> ModifiedContent<Self, StandInModifier> { modified() }
    /// Apple: `func task(priority: TaskPriority = .userInitiated, @_inheritActorContext _ action: @escaping @isolated(any) @Sendable () async -> Void) -> some View`.
    @available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
    public func task(
        priority: TaskPriority = .userInitiated,
        @_inheritActorContext _ action: @escaping @isolated(any) @Sendable () async -> Void
    ) -> some View {
        modified()
    }
}

/// Apple: `@propertyWrapper struct State<Value>`.
@propertyWrapper
public struct State<Value>: DynamicProperty {
    private var value: Value
    /// Apple: `init(wrappedValue:)`.
    public init(wrappedValue value: Value) { self.value = value }
    /// Apple: the current value.
    public var wrappedValue: Value {
        get { value }
        nonmutating set {}
    }
    /// Apple: `var projectedValue: Binding<Value>`; a binding to the state value.
    public var projectedValue: Binding<Value> {
        let value = value
        return Binding(get: { value }, set: { _ in })
    }
}

/// Apple: `struct TextField<Label> where Label : View`.
public struct TextField<Label: View>: PrimitiveStandInView {}
extension TextField where Label == Text {
    /// Apple: `init(_ titleKey: LocalizedStringKey, text: Binding<String>)`.
    public init(_ titleKey: LocalizedStringKey, text: Binding<String>) {}
    /// Apple: `init<S>(_ title: S, text: Binding<String>) where S : StringProtocol`.
    public init<S: StringProtocol>(_ title: S, text: Binding<String>) {}
}

/// Apple: `protocol DynamicProperty`.
public protocol DynamicProperty {}

/// Apple: `enum ScenePhase`.
public enum ScenePhase: Comparable, Hashable, Sendable {
    /// Apple: in the background.
    case background
    /// Apple: visible, not taking events.
    case inactive
    /// Apple: in the foreground, interactive.
    case active
}

/// Apple: `struct EnvironmentValues`.
public struct EnvironmentValues {
    /// Apple: `var scenePhase: ScenePhase`.
    public var scenePhase: ScenePhase { .active }
}

/// Apple: `@propertyWrapper struct Environment<Value>`.
@propertyWrapper
public struct Environment<Value>: DynamicProperty {
    private let keyPath: KeyPath<EnvironmentValues, Value>
    /// Apple: `init(_ keyPath: KeyPath<EnvironmentValues, Value>)`.
    public init(_ keyPath: KeyPath<EnvironmentValues, Value>) { self.keyPath = keyPath }
    /// Apple: the current value.
    public var wrappedValue: Value { EnvironmentValues()[keyPath: keyPath] }
}

/// Apple: `protocol ViewModifier`.
@MainActor
public protocol ViewModifier {
    /// Apple: the modified view.
    associatedtype Body: View
    /// Apple: the content the modifier is applied to.
    typealias Content = _ViewModifier_Content<Self>
    /// Apple: `@ViewBuilder func body(content: Content) -> Body`.
    @ViewBuilder func body(content: Content) -> Body
}

/// Apple: `struct _ViewModifier_Content<Modifier>`.
public struct _ViewModifier_Content<Modifier: ViewModifier>: PrimitiveStandInView {}

extension View {
    /// Apple: `func modifier<T>(_ modifier: T) -> ModifiedContent<Self, T>`.
    public func modifier<T: ViewModifier>(_ modifier: T) -> ModifiedContent<Self, T> {
        ModifiedContent(content: self)
    }
    /// Apple: `func onChange<V>(of value: V, initial: Bool = false, _ action: @escaping (V, V) -> Void) -> some View where V : Equatable`.
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
    public func onChange<V: Equatable>(
        of value: V, initial: Bool = false, _ action: @escaping (_ oldValue: V, _ newValue: V) -> Void
    ) -> some View {
        ModifiedContent<Self, StandInModifier>(content: self)
    }
    /// Apple: `func accessibilityLabel(_ label: Text) -> ModifiedContent<Self, AccessibilityAttachmentModifier>` (string form).
    public func accessibilityValue(_ value: Text) -> ModifiedContent<Self, StandInModifier> {
        ModifiedContent(content: self)
    }
}

/// Apple: `struct AccessibilityNotification` (iOS 17, macOS 14).
public enum AccessibilityNotification {
    /// Apple: `struct Announcement`: text VoiceOver reads out.
    public struct Announcement {
        /// Apple: `init(_ announcement: String)`.
        public init(_ announcement: String) {}
        /// Apple: `@MainActor func post()`.
        @MainActor public func post() {}
    }
}

// MARK: What the sample app (Examples/LatchkeySample) uses beyond the adapter

/// Apple: `@MainActor @preconcurrency protocol App`; the structure of an app.
@MainActor
@preconcurrency
public protocol App {
    /// Apple: the type of scene representing the content of the app.
    associatedtype Body: Scene
    /// Apple: the content and behavior of the app.
    @SceneBuilder @MainActor @preconcurrency var body: Body { get }
    /// Apple: creates an instance of the app using the body that you define for its content.
    @MainActor @preconcurrency init()
}

extension App {
    /// Apple: initializes and runs the app.
    @MainActor @preconcurrency public static func main() {}
}

/// Apple: `@MainActor @preconcurrency protocol Scene`; a part of an app's user interface.
@MainActor
@preconcurrency
public protocol Scene {
    /// Apple: the type of scene that represents the body of this scene.
    associatedtype Body: Scene
    /// Apple: the content and behavior of the scene.
    @SceneBuilder @MainActor @preconcurrency var body: Body { get }
}

extension Never: Scene {}

/// Apple: `@resultBuilder struct SceneBuilder`.
@resultBuilder
public struct SceneBuilder {
    /// Apple: passes a single scene through unmodified.
    public static func buildBlock<Content: Scene>(_ content: Content) -> Content { content }
}

/// Apple: `struct WindowGroup<Content> where Content : View`.
public struct WindowGroup<Content: View>: Scene {
    /// Apple: `init(@ViewBuilder content: () -> Content)`.
    nonisolated public init(@ViewBuilder content: () -> Content) {}
    /// Primitive: no body.
    public var body: Never { fatalError("primitive scene") }
}

/// Apple: `struct VStack<Content> where Content : View`.
public struct VStack<Content: View>: PrimitiveStandInView {
    /// Apple: `init(alignment:spacing:content:)`.
    nonisolated public init(
        alignment: HorizontalAlignment = .center, spacing: CGFloat? = nil, @ViewBuilder content: () -> Content
    ) {}
}

/// Apple: `struct HorizontalAlignment`; only the default is used.
public struct HorizontalAlignment: Equatable, Sendable {
    /// Apple: centered.
    public static let center = HorizontalAlignment()
}

/// Apple: `@propertyWrapper @dynamicMemberLookup struct Binding<Value>`.
@propertyWrapper
public struct Binding<Value> {
    private let get: () -> Value
    /// Apple: `init(get: @escaping () -> Value, set: @escaping (Value) -> Void)`.
    public init(get: @escaping () -> Value, set: @escaping (Value) -> Void) { self.get = get }
    /// Apple: the underlying value.
    public var wrappedValue: Value {
        get { get() }
        nonmutating set {}
    }
}

extension Button where Label == Text {
    /// Apple: `init<S>(_ title: S, action: @escaping @MainActor () -> Void) where S : StringProtocol`.
    nonisolated public init<S: StringProtocol>(_ title: S, action: @escaping @MainActor () -> Void) {
        self.init(action: action) { Text(title) }
    }
}

extension Environment {
    /// Apple: `init(_ objectType: Value.Type) where Value : AnyObject, Value : Observable`; reads an
    /// object an ancestor put in the environment with `environment(_:)`.
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
    public init(_ objectType: Value.Type) where Value: AnyObject & Observable {
        self.init(\EnvironmentValues[objectOfType: ObjectIdentifier(Value.self)])
    }
}

extension EnvironmentValues {
    /// Stand-in only: what `Environment(_ objectType:)` reads. Nothing here runs.
    subscript<Object: AnyObject>(objectOfType type: ObjectIdentifier) -> Object { fatalError("stand-in environment") }
}

extension View {
    /// Apple: `func environment<T>(_ object: T?) -> some View where T : AnyObject, T : Observable`.
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
    public func environment<T: AnyObject & Observable>(_ object: T?) -> some View {
        ModifiedContent<Self, StandInModifier>(content: self)
    }
    /// Apple: `func onOpenURL(perform action: @escaping (URL) -> ()) -> some View`.
    public func onOpenURL(perform action: @escaping (URL) -> Void) -> some View {
        ModifiedContent<Self, StandInModifier>(content: self)
    }
    /// Apple: `func frame(width: CGFloat? = nil, height: CGFloat? = nil, alignment: Alignment = .center) -> some View`.
    public func frame(width: CGFloat? = nil, height: CGFloat? = nil, alignment: Alignment = .center) -> some View {
        ModifiedContent<Self, StandInModifier>(content: self)
    }
    /// Apple: `func alert<S, A>(_ title: S, isPresented: Binding<Bool>, @ViewBuilder actions: () -> A) -> some View where S : StringProtocol, A : View`.
    @available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
    public func alert<S: StringProtocol, A: View>(
        _ title: S, isPresented: Binding<Bool>, @ViewBuilder actions: () -> A
    ) -> some View {
        ModifiedContent<Self, StandInModifier>(content: self)
    }
}

// MARK: ObservableObject (Combine's, which SwiftUI re-exports)

/// Apple (Combine): `protocol ObservableObject : AnyObject`.
public protocol ObservableObject: AnyObject {}

/// Apple: `@propertyWrapper @MainActor @preconcurrency struct ObservedObject<ObjectType> where ObjectType : ObservableObject`.
@propertyWrapper
@MainActor
@preconcurrency
public struct ObservedObject<ObjectType: ObservableObject>: DynamicProperty {
    /// Apple: the object.
    public var wrappedValue: ObjectType
    /// Apple: `init(wrappedValue: ObjectType)`.
    public init(wrappedValue: ObjectType) { self.wrappedValue = wrappedValue }
}

extension View {
    /// Apple: `func task<T>(id value: T, priority: TaskPriority = .userInitiated, @_inheritActorContext _ action: @escaping @isolated(any) @Sendable () async -> Void) -> some View where T : Equatable`.
    @available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
    public func task<T: Equatable>(
        id value: T, priority: TaskPriority = .userInitiated,
        @_inheritActorContext _ action: @escaping @isolated(any) @Sendable () async -> Void
    ) -> some View {
        ModifiedContent<Self, StandInModifier>(content: self)
    }
}
