/// Where every rule about sign-ins, sessions and codes is decided: pure functions from the facts
/// a store read to what happens, so that SQLite and PostgreSQL cannot decide differently. A store
/// only gathers the facts (`SignInFacts`, `RefreshFacts`, `StoredAuthorizationCode`) and applies
/// the writes the verdict names; a backend that decides a hot operation in one statement reports
/// the facts it saw, and the verdict is still taken here (`docs/architecture.md`).
///
/// Each verdict has a truth-table test (`VerdictTests`) listing every combination that matters.
package enum Verdicts {}
