// On Apple platforms LatchkeySessionModel is an ObservableObject through Combine (declared in
// LatchkeyCore, where Combine exists). Linux has no Combine: here the model takes the SwiftUI
// stand-in's ObservableObject instead, so the views that hold it as @ObservedObject compile.
import LatchkeyCore
import SwiftUI

extension LatchkeySessionModel: ObservableObject {}
