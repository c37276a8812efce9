import ArgumentParser
import Logging

/// Lets `--log-level warning` parse straight into swift-log's level.
extension Logger.Level: @retroactive ExpressibleByArgument {}
