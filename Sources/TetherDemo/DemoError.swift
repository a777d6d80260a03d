/// Why the demo cannot run here (a missing executable, no event loop, a
/// file it cannot write): the command says it and exits 3, or 2 for
/// `badInput`. A check that fails is a `DemoFailure`, not this.
package struct DemoError: Error, CustomStringConvertible {
    package let description: String
    package let isBadInput: Bool

    init(_ description: String, badInput: Bool = false) {
        self.description = description
        isBadInput = badInput
    }
}
