"""The protocol's messages, one frozen class per type (lila-ws's ``ClientIn``/``ClientOut``).

- ``inbound``: what clients send, each with the decoder of its payload;
- ``outbound``: what the server sends, each with its payload;
- ``registry``: every type both ways with its class and fields, read by the server's edge
  (``server.protocol``), the Python client (``server.client``) and the docs test.

The frame around a message (JSON, the envelope, the limits) is ``server.protocol``'s.
"""
