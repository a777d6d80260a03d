import Glibc
import Testing
import TetherTestSupport
@testable import TetherGroup

/// The kernel's lock table names who holds a flock(2) lock: this process,
/// on a file of its own, exclusive or shared.
@Suite struct FlockTableTests {
    @Test func anExclusiveHolderIsNamedAndASharedOneIsOnlyListed() throws {
        let scratch = try TemporaryDirectory("tether-flock-table")
        let path = scratch.path + "/held"
        try writeFile(path, "")
        let fd = open(path, O_RDWR | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        var information = stat()
        try #require(fstat(fd, &information) == 0)
        let (device, inode) = (information.st_dev, information.st_ino)
        #expect(FlockTable.exclusiveHolder(device: device, inode: inode) == nil)
        #expect(FlockTable.holders(device: device, inode: inode).isEmpty)

        try #require(flock(fd, LOCK_EX | LOCK_NB) == 0)
        #expect(FlockTable.exclusiveHolder(device: device, inode: inode) == getpid())
        #expect(FlockTable.holders(device: device, inode: inode) == [getpid()])
        // Another file's entry is not this one's.
        let other = scratch.path + "/other"
        try writeFile(other, "")
        var otherInformation = stat()
        try #require(stat(other, &otherInformation) == 0)
        #expect(FlockTable.exclusiveHolder(device: otherInformation.st_dev, inode: otherInformation.st_ino) == nil)

        try #require(flock(fd, LOCK_SH | LOCK_NB) == 0)
        #expect(FlockTable.exclusiveHolder(device: device, inode: inode) == nil)
        #expect(FlockTable.holders(device: device, inode: inode) == [getpid()])
        try #require(flock(fd, LOCK_UN) == 0)
        #expect(FlockTable.holders(device: device, inode: inode).isEmpty)
    }
}
