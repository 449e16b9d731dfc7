"""Comparing peers (names, usernames), presences and contacts."""

from __future__ import annotations

from collections.abc import Mapping

from postbox import PeerId
from sync.protocol import Peer, PeerKind, Presence, peer_kind
from sync.verify.expected import expected_presence
from sync.verify.local_side import LocalState
from sync.verify.report import Category, Report

__all__ = ["compare_contacts", "compare_peers", "compare_presences", "contact_claims"]


def compare_peers(
    report: Report, local: LocalState, server: Mapping[int, Peer], required: frozenset[PeerId]
) -> None:
    """Every stored peer has the server's name and username; ``required`` peers (listed
    chats, authors of stored messages) must be stored at all."""
    for peer_id, stored in local.peers.items():
        peer = int(peer_id)
        expected = server.get(peer)
        if stored is None:
            if peer_id in required:
                report.add(Category.PEERS, peer, "shown but not stored")
            continue
        report.peers_compared += 1
        if expected is None:
            report.add(Category.PEERS, peer, "stored, but the server has no such peer")
            continue
        if stored.name != expected.name:
            report.add(Category.PEERS, peer, f"name {stored.name!r} != server {expected.name!r}")
        if stored.username != expected.username:
            report.add(
                Category.PEERS,
                peer,
                f"username {stored.username!r} != server {expected.username!r}",
            )


def compare_presences(report: Report, local: LocalState, server: Mapping[int, Presence]) -> None:
    """Every stored presence is the server's; a user with none stored is only counted."""
    for peer_id in local.peers:
        if peer_kind(int(peer_id)) is not PeerKind.USER:
            continue
        stored = local.presences.get(peer_id)
        wire = server.get(int(peer_id))
        if stored is None:
            report.presences_unknown += wire is not None
            continue
        report.presences_compared += 1
        expected = None if wire is None else expected_presence(wire)
        if stored != expected:
            shown = "none" if expected is None else f"{expected.status.name} {expected.timestamp}"
            report.add(
                Category.PRESENCES,
                int(peer_id),
                f"{stored.status.name} {stored.timestamp} != server {shown}",
            )


def contact_claims(local: LocalState) -> frozenset[PeerId]:
    """The peers whose contact status the client states: its contacts, and every peer
    whose profile it loaded (and so knows it is not a contact)."""
    return local.contacts | local.profiles_loaded


def compare_contacts(report: Report, local: LocalState, server: Mapping[int, bool | None]) -> None:
    for peer_id in sorted(contact_claims(local)):
        peer = int(peer_id)
        report.contacts_compared += 1
        mine = peer_id in local.contacts
        theirs = server.get(peer)
        if theirs is None:
            if mine:
                report.add(Category.CONTACTS, peer, "a contact the server does not know")
        elif mine != theirs:
            shown = "a contact" if mine else "not a contact"
            report.add(Category.CONTACTS, peer, f"{shown} here, the server says otherwise")
