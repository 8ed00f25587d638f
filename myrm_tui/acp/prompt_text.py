"""A `session/prompt`'s content blocks as the text of a myrm turn.

Text blocks are the ask; an embedded text resource (a file the user @-mentioned in the editor)
is fenced with its URI so the model can tell it from the ask; a resource link is named by URI
(the model reads it with its own fenced tools). Images and audio are not advertised
(server.initialize), so a client does not send them.
"""

from __future__ import annotations

from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

# What a session/prompt may carry (the SDK's PromptRequest.prompt items).
PromptBlock = (
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock
)


def prompt_text(blocks: list[PromptBlock]) -> str:
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, EmbeddedResourceContentBlock) and isinstance(block.resource, TextResourceContents):
            parts.append(f"\n<file uri={block.resource.uri!r}>\n{block.resource.text}\n</file>\n")
        elif isinstance(block, ResourceContentBlock):
            parts.append(f" {block.uri} ")
    return "".join(parts)
