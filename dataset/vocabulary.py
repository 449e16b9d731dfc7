"""The words a generated account is made of: names, a Zipf-weighted vocabulary, emoji,
links, and the hour-of-day activity (UTC)."""

from __future__ import annotations

import itertools

__all__ = [
    "BOT_NAMES",
    "CHANNEL_PATTERNS",
    "CHANNEL_TOPICS",
    "EMOJI",
    "FILE_EXTENSIONS",
    "FIRST_NAMES",
    "GROUP_ADJECTIVES",
    "GROUP_NOUNS",
    "HOUR_WEIGHTS",
    "LAST_NAMES",
    "LINK_DOMAINS",
    "LINK_INTROS",
    "SEARCH_WORD",
    "SHORT_REPLIES",
    "VOCABULARY",
    "VOCABULARY_CUMULATIVE",
]

#: A vocabulary word common enough that a full-text search for it finds messages.
SEARCH_WORD = "coffee"

FIRST_NAMES = (
    "Alice", "Amir", "Anna", "Ben", "Carla", "Chen", "Daniel", "Dmitri", "Elena", "Emma",
    "Farah", "Felix", "Grace", "Hana", "Igor", "Isabel", "Jonas", "Julia", "Kai", "Lena",
    "Leo", "Lucia", "Marco", "Maya", "Mia", "Nadia", "Noah", "Olga", "Omar", "Paula",
    "Pavel", "Priya", "Rosa", "Sam", "Sara", "Tariq", "Theo", "Vera", "Yuki", "Zoe",
)  # fmt: skip
LAST_NAMES = (
    "Andersen", "Baker", "Costa", "Dubois", "Evans", "Fischer", "Garcia", "Hansen", "Ito",
    "Jensen", "Kowalski", "Larsen", "Martin", "Novak", "Okafor", "Petrov", "Quinn", "Rossi",
    "Schmidt", "Silva", "Tanaka", "Ueda", "Volkov", "Weber", "Xu", "Yilmaz", "Zhang",
)  # fmt: skip
BOT_NAMES = ("Weather", "Translate", "Reminder", "Poll", "News", "Music", "Quiz", "Stickers")
GROUP_ADJECTIVES = (
    "Weekend", "Family", "Office", "Morning", "Night", "Book", "Board Game", "Climbing",
    "Garden", "Neighbourhood", "Study", "Running", "Coffee", "Jazz", "Travel", "Cooking",
)  # fmt: skip
GROUP_NOUNS = (
    "Club", "Crew", "Team", "Gang", "Friends", "Circle", "Squad", "Chat", "Group", "Collective",
)  # fmt: skip
CHANNEL_TOPICS = (
    "Tech", "Science", "Football", "Design", "Python", "Space", "Cinema", "Economy", "Photo",
    "Music", "Travel", "History", "Food", "Markets", "Climate", "Gaming",
)  # fmt: skip
CHANNEL_PATTERNS = ("{} Daily", "The {} Digest", "{} News", "{} Weekly", "All About {}")

#: Words with Zipf-like weights (earlier words are more frequent).
VOCABULARY = (
    "the", "I", "you", "to", "and", "a", "it", "is", "we", "that", "of", "in", "for", "this",
    "on", "be", "have", "do", "not", "with", "what", "just", "so", "are", "can", "will",
    "now", "there", "how", "time", "today", "tomorrow", "good", "think", "know", "see",
    "like", "really", "maybe", "later", "coffee", "meeting", "call", "home", "work",
    "weekend", "tonight", "dinner", "lunch", "photos", "plan", "idea", "train", "late",
    "early", "nice", "great", "thanks", "sorry", "again", "need", "want", "going", "back",
    "new", "still", "already", "soon", "morning", "evening", "week", "project", "deadline",
    "review", "code", "release", "ticket", "party", "birthday", "movie", "book", "music",
    "concert", "weather", "rain", "sun", "beach", "mountains", "hike", "bike", "car", "bus",
    "station", "airport", "flight", "hotel", "trip", "holiday", "office", "kitchen", "pizza",
    "pasta", "tea", "cake", "market", "shop", "price", "money", "game", "match", "score",
    "team", "news", "article", "link", "video", "song", "playlist", "garden", "flowers",
    "dog", "cat", "kids", "school", "class", "exam", "homework", "doctor", "gym", "run",
    "walk", "park", "river", "bridge", "city", "street", "neighbours", "keys", "phone",
    "laptop", "battery", "update", "bug", "fix", "server", "database", "message", "chat",
)  # fmt: skip
VOCABULARY_CUMULATIVE = tuple(
    itertools.accumulate(1.0 / (rank + 8) ** 0.9 for rank in range(len(VOCABULARY)))
)
SHORT_REPLIES = (
    "ok", "OK!", "sure", "thanks!", "Thank you!", "haha", "lol", "yes", "no", "nope",
    "on my way", "sounds good", "good night", "see you", "why?", "wow", "nice!", "agreed",
    "one sec", "brb", "same here", "no worries", "love it", "exactly",
)  # fmt: skip
#: Emoji that terminals draw two columns wide (no variation selectors), for aligned output.
EMOJI = ("😀", "😂", "👍", "🎉", "🔥", "🙏", "😅", "🤔", "👀", "🚀", "☕", "😍", "🙌", "💪", "😎")
LINK_DOMAINS = ("example.com", "example.org", "news.example.net", "blog.example.com")
LINK_INTROS = ("look at this", "have you seen this?", "interesting:", "as promised", "fyi")
FILE_EXTENSIONS = ("pdf", "docx", "xlsx", "zip", "txt", "pptx")

#: Hour-of-day activity (UTC): quiet at night, peaks at lunch and in the evening.
HOUR_WEIGHTS = (
    3, 2, 1, 1, 1, 1, 2, 4, 6, 7, 8, 8, 9, 8, 7, 7, 8, 8, 9, 10, 10, 9, 7, 5,
)  # fmt: skip
