import Foundation
import Testing

@testable import LatchkeyServer

/// The dashboard's hourly history on an injected clock: counts land in their hour, hours roll
/// over, and a slot reused a day later starts empty.
@Suite("Metrics history")
struct MetricsHistoryTests {
    @Test("24 hours, oldest first; an hour a day old is gone")
    func hours() {
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))  // 08:00 UTC
        let history = MetricsHistory(clock: { clock.now })
        history.signIn(provider: "facebook", method: "classic")
        history.signIn(provider: "facebook", method: "classic")
        history.error(code: "rate_limited")
        history.providerCall(provider: "facebook", failed: false, seconds: 0.010)
        history.providerCall(provider: "facebook", failed: true, seconds: 0.030)
        clock.advance(3600)
        history.signIn(provider: "apple", method: "apple")

        let recent = history.recent()
        #expect(recent.count == 24 && recent.map(\.index) == Array((recent[0].index)...(recent[0].index + 23)))
        #expect(recent[22].signIns == ["facebook · classic": 2] && recent[22].errors == ["rate_limited": 1])
        #expect(recent[22].providerCalls["facebook"]?.count == 2 && recent[22].providerCalls["facebook"]?.failed == 1)
        #expect(abs((recent[22].providerCalls["facebook"]?.mean ?? 0) - 0.020) < 1e-9)
        #expect(recent[23].signIns == ["apple · apple": 1])

        // A day later the same slots hold new hours: nothing of the old ones shows.
        clock.advance(24 * 3600)
        history.error(code: "unavailable")
        let later = history.recent()
        #expect(later.last?.errors == ["unavailable": 1] && later.last?.signIns == [:])
        #expect(later.dropLast().allSatisfy { $0.signIns.isEmpty && $0.errors.isEmpty })
    }

    @Test("charts: the busiest series first, the rest added up as other, round axis tops")
    func charts() {
        let hours = (0..<24).map { MetricsHistory.Hour(index: 480_000 + $0) }
        var busy = hours
        busy[23].errors = Dictionary(uniqueKeysWithValues: (0..<9).map { ("code\($0)", $0 + 1) })
        let (names, series) = DashboardCharts.stacked(busy.map(\.errors))
        #expect(names.count == DashboardCharts.maximumSeries + 1 && names.first == "code8" && names.last == "other")
        #expect(series.last?.last == 3)  // code0 (1) + code1 (2)
        #expect([0, 1, 3, 7, 12, 180, 1001].map(DashboardCharts.niceCeiling) == [0, 1, 5, 10, 20, 200, 2000])
        let svg = DashboardCharts.bars(hours: hours, names: [], series: [], unit: "x", grouped: false)
        #expect(svg.contains("Nothing yet") && !svg.contains("<rect"))
    }
}
