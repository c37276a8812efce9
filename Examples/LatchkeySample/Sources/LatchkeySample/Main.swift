// The entry point, apart from the app so that the app's sources compile in the SDK's checks (a
// test target cannot have its own `@main`).
@main extension LatchkeySampleApp {}
