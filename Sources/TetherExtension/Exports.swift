// Extension authors ask for tokens and read auth state through the SDK.
@_exported import TetherAuth
