"""What the user sends: attached images checked and capped, and the content as it is stored."""
