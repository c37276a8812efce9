import Foundation
import LatchkeyShared

/// The dashboard's charts, drawn here as SVG from `MetricsHistory`'s hours: no script, no chart
/// library, nothing the Content-Security-Policy must allow (colours come from the console's
/// stylesheet through classes). Each bar carries a `<title>`, which browsers show on hover.
enum DashboardCharts {
    /// A chart as the dashboard template reads it.
    struct Chart {
        let title: String
        /// The SVG, every text in it escaped.
        let svg: String
        let legend: [LegendItem]
        let hasLegend: Bool

        init(title: String, svg: String, legend: [LegendItem]) {
            self.title = title
            self.svg = svg
            self.legend = legend
            hasLegend = !legend.isEmpty
        }
    }

    /// One series' name and colour class (`c0`…`c7`).
    struct LegendItem {
        let name: String
        let color: Int
    }

    /// The most series a chart shows; the rest are added up as "other".
    static let maximumSeries = 7

    static let width = 720.0
    static let height = 200.0
    private static let left = 44.0
    private static let bottom = 22.0
    private static let top = 10.0

    /// The dashboard's three charts.
    static func charts(_ hours: [MetricsHistory.Hour]) -> [Chart] {
        let signIns = stacked(hours.map(\.signIns))
        let errors = stacked(hours.map(\.errors))
        let providers = Set(hours.flatMap { $0.providerCalls.keys }).sorted()
        let latency = providers.map { provider in
            (provider, hours.map { $0.providerCalls[provider]?.mean.map { $0 * 1000 } ?? 0 })
        }
        let failures = providers.map { provider in hours.map { $0.providerCalls[provider]?.failed ?? 0 } }
        return [
            Chart(
                title: "Sign-ins per hour, by provider and path",
                svg: bars(hours: hours, names: signIns.names, series: signIns.series, unit: "sign-ins", grouped: false),
                legend: legend(signIns.names)),
            Chart(
                title: "Errors answered per hour, by code",
                svg: bars(hours: hours, names: errors.names, series: errors.series, unit: "errors", grouped: false),
                legend: legend(errors.names)),
            Chart(
                title: "Facebook and Apple: mean call time per hour (ms)",
                svg: bars(
                    hours: hours, names: latency.map(\.0), series: latency.map(\.1), unit: "ms", grouped: true,
                    notes: failures.map { $0.map { $0 > 0 ? "\($0) failed" : "" } }),
                legend: legend(latency.map(\.0))),
        ]
    }

    /// Per-hour counts turned into series: the busiest names first, the rest as "other".
    static func stacked(_ hours: [[String: Int]]) -> (names: [String], series: [[Double]]) {
        var totals: [String: Int] = [:]
        for hour in hours { totals.merge(hour, uniquingKeysWith: +) }
        let ranked = totals.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map(\.key)
        let shown = Array(ranked.prefix(maximumSeries))
        let rest = Set(ranked.dropFirst(maximumSeries))
        var names = shown
        var series = shown.map { name in hours.map { Double($0[name] ?? 0) } }
        if !rest.isEmpty {
            names.append("other")
            series.append(hours.map { hour in Double(hour.filter { rest.contains($0.key) }.values.reduce(0, +)) })
        }
        return (names, series)
    }

    private static func legend(_ names: [String]) -> [LegendItem] {
        names.enumerated().map { LegendItem(name: $0.element, color: $0.offset) }
    }

    /// Bars per hour: stacked (counts) or side by side (`grouped`, one per series). A bar's hover
    /// title says the hour, the series' name and the value; `notes` add to it.
    static func bars(
        hours: [MetricsHistory.Hour], names: [String], series: [[Double]], unit: String, grouped: Bool,
        notes: [[String]] = []
    ) -> String {
        let plotWidth = width - left - 8
        let plotHeight = height - top - bottom
        let slot = plotWidth / Double(max(hours.count, 1))
        let peaks = hours.indices.map { index in
            grouped
                ? series.map { $0[index] }.max() ?? 0
                : series.reduce(0) { $0 + $1[index] }
        }
        let scaleTop = niceCeiling(peaks.max() ?? 0)
        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(format(width)) \(format(height))\" "
            + "role=\"img\" aria-label=\"\(HTML.escape(unit)) per hour\" class=\"chart\">"
        // The axis: zero, the top of the scale, and a line for each.
        for (value, y) in [(0.0, top + plotHeight), (scaleTop, top)] where y == top + plotHeight || scaleTop > 0 {
            svg +=
                "<line class=\"grid\" x1=\"\(format(left))\" x2=\"\(format(width - 8))\" y1=\"\(format(y))\" y2=\"\(format(y))\"/>"
            svg +=
                "<text class=\"axis\" x=\"\(format(left - 4))\" y=\"\(format(y + 4))\" text-anchor=\"end\">\(format(value))</text>"
        }
        for (index, hour) in hours.enumerated() {
            let x = left + Double(index) * slot
            if hour.index % 6 == 0 {
                let label = String(format: "%02d:00", ((hour.index % 24) + 24) % 24)
                svg += "<text class=\"axis\" x=\"\(format(x))\" y=\"\(format(height - 6))\">\(label)</text>"
            }
            guard scaleTop > 0 else { continue }
            var base = top + plotHeight
            let barWidth = grouped ? (slot - 2) / Double(max(series.count, 1)) : slot - 2
            for (number, values) in series.enumerated() where values[index] > 0 {
                let barHeight = values[index] / scaleTop * plotHeight
                let barX = grouped ? x + 1 + Double(number) * barWidth : x + 1
                let barY = grouped ? top + plotHeight - barHeight : base - barHeight
                if !grouped { base -= barHeight }
                let note = notes.indices.contains(number) ? notes[number][index] : ""
                let title =
                    String(format: "%02d:00 UTC, ", ((hour.index % 24) + 24) % 24) + names[number] + ": "
                    + format(values[index]) + " \(unit)" + (note.isEmpty ? "" : ", \(note)")
                svg +=
                    "<rect class=\"c\(number)\" x=\"\(format(barX))\" y=\"\(format(barY))\" width=\"\(format(max(barWidth, 1)))\" height=\"\(format(max(barHeight, 0.5)))\">"
                    + "<title>\(HTML.escape(title))</title></rect>"
            }
        }
        if scaleTop == 0 {
            svg +=
                "<text class=\"empty\" x=\"\(format(left + plotWidth / 2))\" y=\"\(format(top + plotHeight / 2))\" text-anchor=\"middle\">Nothing yet</text>"
        }
        return svg + "</svg>"
    }

    /// The smallest 1, 2 or 5 × 10ⁿ at or above `value`, so the axis reads round numbers.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 0 }
        let magnitude = pow(10, (log10(value)).rounded(.down))
        for step in [1.0, 2, 5, 10] where step * magnitude >= value { return step * magnitude }
        return 10 * magnitude
    }

    /// A number as the chart writes it: at most one decimal.
    static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }
}
