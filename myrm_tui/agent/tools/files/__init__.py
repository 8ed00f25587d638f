"""The file tools: read, write, edit, the paths they may reach, the integrity guard, diffs, and the
editor's file system when myrm runs inside an editor."""
