"""The blocks a transcript is made of: user and assistant messages (live and stored), tool and
subagent blocks, notes, vault cards and compaction dividers."""
