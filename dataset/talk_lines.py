"""The lines around the conversation scripts: slot values, greetings and closings,
captions and file names per topic, reactions to media, link intros, and the tables
edits use (common typos, words people add on a second look).

Emoji here have emoji presentation on their own (no variation selector), so terminals
draw them two columns wide.
"""

from __future__ import annotations

from dataset.name_tables import CITIES
from dataset.peer_names import ALL_GIVEN_NAMES

__all__ = [
    "BOT_NOTICES",
    "CLOSERS",
    "EMOJI",
    "EXPANSIONS",
    "FILE_CAPTIONS",
    "FILE_NAMES",
    "GROUP_GREETINGS",
    "LINK_DOMAINS",
    "LINK_INTROS",
    "NEUTRAL_REPLIES",
    "NUDGES",
    "PHOTO_CAPTIONS",
    "POST_UPDATES",
    "PRIVATE_GREETINGS",
    "REACTIONS",
    "SLOTS",
    "TOPIC_BEATS",
    "TYPOS",
    "VIDEO_CAPTIONS",
    "VOICE_CAPTIONS",
]

#: Emoji added at the end of some lines.
EMOJI = ("😀", "😂", "👍", "🎉", "🔥", "🙏", "😅", "🤔", "👀", "🚀", "☕", "😍", "🙌", "💪", "😎")

#: Values of the ``{slot}`` names; one value per slot holds through a conversation.
SLOTS: dict[str, tuple[str, ...]] = {
    "day": (
        "tomorrow", "tonight", "on Saturday", "on Sunday", "this weekend", "on Friday",
        "next week", "on Thursday", "tomorrow evening", "on Monday",
    ),
    "time": (
        "7:30", "8:00", "6:45", "12:30", "1:00", "5:30", "6:00", "7:00", "9:30", "10:00",
        "18:00", "19:30", "20:00",
    ),
    "place": (
        "the usual place", "the corner café", "the station", "the park entrance",
        "the old market", "the bakery", "the library", "the bar by the river", "my place",
        "the main square", "the bus stop", "the bookshop",
    ),
    "food": (
        "pizza", "ramen", "sushi", "tacos", "curry", "dumplings", "pho", "burgers",
        "falafel", "pasta", "a poke bowl", "Thai food", "kebab", "dim sum",
    ),
    "dish": (
        "lasagne", "banana bread", "shakshuka", "risotto", "chili", "a lemon cake", "dal",
        "gnocchi", "fresh bread", "paella", "dumplings", "a curry",
    ),
    "restaurant": (
        "that new ramen place", "Luigi's", "the Thai place downstairs", "Casa Verde",
        "the food market", "the little Greek place", "Sakura Garden",
        "the burger place on the corner",
    ),
    "film": (
        "The Long Summer", "Night Train to Nowhere", "Paper Moons", "The Last Lighthouse",
        "Quiet Harbour", "Neon Forest", "Salt and Sky", "The Glass Garden",
        "Midnight Ferry", "Small Giants", "The Cartographer's Son", "Orbit",
    ),
    "series": (
        "the new detective series", "that baking show", "the space series everyone talks about",
        "the Danish crime drama", "the documentary about octopuses", "the hospital series",
    ),
    "team": ("City", "United", "the Rovers", "the Tigers", "Athletic", "Real", "the Falcons"),
    "score": ("2-1", "3-0", "1-1", "4-2", "0-0", "2-2", "3-1", "1-0"),
    "book": (
        "Winter Orchard", "The Paper Bridge", "Seven Small Rooms", "Letters from the Coast",
        "The Salt Road", "A House of Clocks", "North of Everything", "The Quiet Engine",
    ),
    "band": (
        "The Velvet Echoes", "Paper Lanterns", "Neon Harbour", "Saltwater Choir",
        "The Midnight Owls", "Glass Animals of Lyon", "Brass Tigers", "Slow Comets",
    ),
    "city": CITIES,
    "city2": CITIES[::-1],
    "activity": (
        "a walk by the river", "bouldering", "the flea market", "a movie",
        "a picnic in the park", "board games", "a bike ride", "the new exhibition",
        "brunch", "karaoke", "a swim", "the pub quiz",
    ),
    "friend": ALL_GIVEN_NAMES,
    "doc": (
        "the slides", "the report", "the contract", "the invoice", "the budget",
        "the draft", "the proposal", "the spreadsheet",
    ),
    "meeting": (
        "the standup", "the client call", "our one-to-one", "the planning meeting",
        "the review", "the weekly sync",
    ),
    "pet": ("the cat", "the dog", "Pepper", "Biscuit", "Luna", "Miso", "Rocky"),
    "temp": ("19", "21", "23", "24", "26", "28", "30", "33"),
    "cold": ("-5", "-2", "0", "1", "3"),
    "forecast": (
        "sunny, 24°C", "cloudy, 17°C", "light rain, 14°C", "heavy rain, 11°C",
        "windy, 15°C", "snow, -2°C", "fog, 6°C", "clear skies, 27°C", "thunderstorms, 22°C",
    ),
    "forecast_later": (
        "sunny, 26°C", "cloudy, 18°C", "showers, 13°C", "clear, 21°C", "windy, 12°C",
        "sleet, 1°C",
    ),
    "minutes": ("five", "ten", "fifteen", "twenty"),
    "gadget": ("phone", "laptop", "tablet", "headphones", "router", "smartwatch"),
    "company": (
        "Orbitron", "Nimbus Labs", "Pixelhaus", "Quanta", "Bluefin Systems", "Tessel",
        "Northwind", "Lumen",
    ),
    "percent": ("2", "3.4", "5", "7", "12", "15", "20"),
}  # fmt: skip

PRIVATE_GREETINGS = (
    "Hey!", "Hi {name}!", "Hey {name}", "Morning!", "Hi!", "Hello!", "Heyy", "Hey you 🙂",
    "Good morning!", "Hi {name} 👋",
)  # fmt: skip
GROUP_GREETINGS = (
    "Hi all!", "Morning everyone!", "Hey team", "Hello people", "Hi everyone 👋",
    "Evening all",
)  # fmt: skip
#: What the two sides say once a conversation's script has run out.
CLOSERS = (
    "👍", "😄", "Ok!", "Great", "Talk later!", "See you!", "Cool", "Thanks!", "Sure", "🙌",
    "Haha", "Perfect", "Good night!", "Ok, speak soon",
)  # fmt: skip

#: What a bot sends unasked.
BOT_NOTICES = (
    "Tip: send /help to see everything I can do.",
    "Your daily summary is ready. Send /today to see it.",
    "Reminder: you asked me to check in today. Send /settings to change this.",
    "New this week: faster answers and a /stats command.",
)

#: Photo captions by talk topic ("" serves every topic).
PHOTO_CAPTIONS: dict[str, tuple[str, ...]] = {
    "": (
        "Look!",
        "Today",
        "This one's for you",
        "From this morning",
        "Found this 😂",
        "Guess where I am",
        "Not bad, right?",
    ),
    "food": ("Dinner 😋", "Made {dish} tonight", "Best {food} in town", "Breakfast"),
    "coffee": ("Morning coffee ☕", "Look at this latte art", "Coffee with a view"),
    "travel": ("View from the hotel", "Made it to {city}!", "Sunset in {city}", "The old town"),
    "pets": ("Look who's sleeping", "{pet} says hi", "Caught in the act 😂"),
    "family": ("The kids at the park", "Sunday lunch", "Grandma's garden"),
    "weather": ("Look at this sky", "Snow!", "Rainbow over the river"),
    "sport": ("Finish line!", "Made it to the top 💪", "After the run 😅"),
    "home": ("The new shelves 🙌", "Before and after", "My balcony garden"),
    "film": ("Ready for the movie 🍿",),
    "music": ("Front row!", "The stage before the show"),
    "books": ("Current read 📚", "My reading corner"),
    "work": ("My desk today", "The whiteboard after the meeting"),
    "study": ("Library mode 📚", "Notes from today"),
    "tech": ("The new setup", "Is this normal? 😅"),
    "group": ("Group photo!", "Us yesterday 😄"),
}
VIDEO_CAPTIONS: dict[str, tuple[str, ...]] = {
    "": ("Watch till the end 😂", "Had to film this", "Turn the sound on", "Look at this"),
    "food": ("How to flip a pancake, apparently",),
    "travel": ("The view from the train", "Waves!"),
    "pets": ("{pet} discovering the garden",),
    "music": ("The crowd last night!",),
    "sport": ("Last-minute goal!",),
    "family": ("The kids dancing 😂",),
}
VOICE_CAPTIONS = ("Easier to explain", "Sorry, walking", "Listen when you can")
FILE_CAPTIONS = ("Here you go", "As promised", "This one", "See attached", "Here it is")
FILE_NAMES: dict[str, tuple[str, ...]] = {
    "": ("notes.txt", "photos.zip", "document.pdf", "scan.pdf", "tickets.pdf"),
    "work": (
        "Q3_report.pdf", "slides_final.pptx", "budget_2024.xlsx", "proposal_v2.docx",
        "meeting_notes.docx", "invoice_0423.pdf",
    ),
    "travel": ("boarding_pass.pdf", "itinerary.pdf", "hotel_booking.pdf", "train_tickets.pdf"),
    "home": ("lease_contract.pdf", "floor_plan.pdf", "electricity_bill.pdf"),
    "study": ("lecture_notes.pdf", "exam_schedule.pdf", "essay_draft.docx", "reading_list.pdf"),
    "food": ("recipes.pdf", "shopping_list.txt", "menu.pdf"),
    "family": ("photos_sunday.zip", "party_invitation.pdf"),
    "music": ("setlist.pdf", "rehearsal_notes.txt"),
}  # fmt: skip
#: What the other side says to a photo, video, voice message, file or link.
REACTIONS: dict[str, tuple[str, ...]] = {
    "photo": (
        "Wow 😍", "Looks amazing!", "Haha love it", "Send more!", "Beautiful", "😂", "Nice!",
        "So jealous",
    ),
    "video": ("😂😂", "Watched it twice", "Amazing", "Haha no way", "Love this"),
    "voice": ("Got it 👍", "Ok, sounds good", "Haha ok", "Sure, will do", "Ok, call you later"),
    "file": ("Thanks, got it", "Will have a look tonight", "Perfect, thanks!", "Thanks!"),
    "link": (
        "Oh interesting", "Reading it now", "Saw that yesterday!", "Thanks for sharing",
        "Haha wow", "Will read it later",
    ),
}  # fmt: skip
LINK_DOMAINS = ("example.com", "example.org", "news.example.net", "blog.example.com")
LINK_INTROS = (
    "Look at this:", "Have you seen this?", "This made me think of you", "Interesting read:",
    "As promised:", "Thought you'd like this", "Worth a read:", "Haha, look:",
)  # fmt: skip
#: The channel beat whose headlines serve as the titles of links shared on a topic.
TOPIC_BEATS = {
    "food": "food", "coffee": "food", "travel": "travel", "film": "culture",
    "music": "culture", "books": "culture", "sport": "sport", "work": "economy",
    "tech": "tech", "weather": "climate", "home": "city", "health": "health",
    "study": "science", "family": "health", "pets": "science", "plans": "city",
    "smalltalk": "city", "group": "city",
}  # fmt: skip

#: Live traffic: a person writing again before anyone answered.
NUDGES = ("?", "Hello? 😄", "No rush btw", "Let me know when you can", "Any news?")
#: Live traffic: an answer to a message typed in the app (whatever it said).
NEUTRAL_REPLIES = (
    "Haha true", "Ok, sounds good", "Makes sense", "Sure 👍", "Let me check and get back to you",
    "Oh nice", "Haha", "Agreed", "Ok!", "Good point",
)  # fmt: skip

#: Common typos: the word as meant, and as typed in a hurry.
TYPOS: dict[str, str] = {
    "tomorrow": "tomorow", "definitely": "definately", "restaurant": "restaraunt",
    "because": "becuase", "the": "teh", "you": "yuo", "until": "untill",
    "really": "realy", "there": "tehre", "coffee": "cofee", "meeting": "meeitng",
    "station": "staiton", "thanks": "thnaks", "probably": "probaly", "going": "goign",
    "just": "jsut", "what": "waht", "about": "abuot", "with": "wiht", "have": "ahve",
    "know": "konw", "think": "thinl", "great": "graet", "weekend": "weeekend",
    "tonight": "tonigth", "minutes": "mintues", "birthday": "birthay", "dinner": "diner",
    "amazing": "amazign", "sorry": "sory", "see": "se", "when": "wehn", "time": "tiem",
}  # fmt: skip
#: What a channel adds to a post it edits.
POST_UPDATES = (
    "the date was wrong, now corrected.", "the link works again.",
    "more details on the site.", "a typo in the headline is fixed.",
    "times confirmed by the organisers.",
)  # fmt: skip
#: Words people add on a second look: (as first sent, as edited).
EXPANSIONS: tuple[tuple[str, str], ...] = (
    ("good", "really good"), ("great", "really great"), ("tomorrow", "tomorrow morning"),
    ("the station", "the main station"), ("on my way", "on my way now"),
    ("Thanks", "Thanks a lot"), ("thanks", "thanks a lot"), ("sorry", "so sorry"),
    ("amazing", "absolutely amazing"), ("tired", "really tired"), ("busy", "super busy"),
    ("late", "a bit late"), ("nice", "really nice"), ("ready", "almost ready"),
    ("Coffee", "A coffee"), ("the kids", "both kids"), ("dinner", "dinner tonight"),
    ("Can you", "Could you please"), ("No rush", "No rush at all"), ("snowing", "snowing again"),
    ("the draft", "the final draft"), ("is down", "is down again"), ("arrived", "finally arrived"),
    ("How's", "So how's"), ("the usual place", "the usual place by the river"),
    ("five minutes", "five minutes max"), ("loved it", "absolutely loved it"),
    ("the new place", "the new Italian place"),
)  # fmt: skip
