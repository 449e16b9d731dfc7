"""The names a generated account's peers are made of: people by region of origin, bots,
groups and channels with their themes, and cities.

Written for this project: common given names and family names of many origins, in
Latin script (so terminals draw them one column per letter), and made-up bots, groups
and channels.
"""

from __future__ import annotations

__all__ = [
    "BOT_KINDS",
    "BOT_PATTERNS",
    "CHANNEL_PATTERNS",
    "CHANNEL_TOPICS",
    "CITIES",
    "EDITIONS",
    "GROUP_NOUNS",
    "GROUP_THEMES",
    "NICKNAMES",
    "REGIONS",
    "SELF_NAME",
]

#: The account's own user.
SELF_NAME = "Alex Morgan"

#: (given names, family names) of one region of origin; a person is mostly drawn from
#: one region, sometimes with a family name from another.
REGIONS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (
        ("Oliver", "Emily", "Jack", "Charlotte", "Harry", "Sophie", "James", "Grace",
         "Thomas", "Lucy", "Ethan", "Hannah", "Daniel", "Chloe"),
        ("Smith", "Walker", "Clarke", "Hughes", "Bennett", "Foster", "Turner", "Price",
         "Morris", "Ward", "Brooks", "Hayes", "Quinn", "Evans"),
    ),
    (
        ("Lucía", "Mateo", "Sofía", "Diego", "Valentina", "Javier", "Camila", "Carlos",
         "Elena", "Pablo", "Isabel", "Andrés", "Marta", "Álvaro"),
        ("García", "Fernández", "López", "Martínez", "Romero", "Navarro", "Torres",
         "Castillo", "Ortega", "Morales", "Ruiz", "Vega"),
    ),
    (
        ("João", "Beatriz", "Tiago", "Mariana", "Rafael", "Inês", "Gabriel", "Larissa",
         "Pedro", "Carolina", "Rodrigo", "Luana"),
        ("Silva", "Costa", "Oliveira", "Pereira", "Almeida", "Ferreira", "Rocha",
         "Carvalho", "Souza", "Lima", "Barbosa", "Ribeiro"),
    ),
    (
        ("Camille", "Louis", "Chloé", "Hugo", "Manon", "Julien", "Léa", "Antoine",
         "Margaux", "Nicolas", "Élodie", "Mathis"),
        ("Dubois", "Moreau", "Laurent", "Lefèvre", "Girard", "Bonnet", "Fournier",
         "Mercier", "Blanc", "Rousseau", "Martin", "Lambert"),
    ),
    (
        ("Lukas", "Anna", "Felix", "Lena", "Jonas", "Marie", "Maximilian", "Leonie",
         "Leon", "Clara", "Paul", "Johanna", "Finn", "Mia"),
        ("Müller", "Schneider", "Fischer", "Weber", "Wagner", "Becker", "Hoffmann",
         "Schulz", "Koch", "Richter", "Bauer", "Wolf", "Schmidt", "Keller"),
    ),
    (
        ("Giulia", "Marco", "Chiara", "Luca", "Francesca", "Matteo", "Alessia", "Lorenzo",
         "Sara", "Davide", "Federica", "Stefano"),
        ("Rossi", "Russo", "Ferrari", "Esposito", "Bianchi", "Romano", "Colombo", "Ricci",
         "Marino", "Greco", "Conti", "Galli"),
    ),
    (
        ("Katarzyna", "Piotr", "Agnieszka", "Tomasz", "Zofia", "Michał", "Magda", "Jakub",
         "Ola", "Kuba", "Marek", "Ewa"),
        ("Nowak", "Mazur", "Wójcik", "Kaczmarek", "Krawczyk", "Dudek", "Wieczorek",
         "Zając", "Kowalczyk", "Pawlak"),
    ),
    (
        ("Dmitri", "Olga", "Sergei", "Natalia", "Andrii", "Iryna", "Mykola", "Yulia",
         "Oksana", "Taras", "Sasha", "Vera"),
        ("Shevchenko", "Bondarenko", "Kovalenko", "Tkachenko", "Melnyk", "Kravets",
         "Lysenko", "Savchenko", "Marchenko", "Boyko"),
    ),
    (
        ("Emre", "Elif", "Mehmet", "Zeynep", "Can", "Ayşe", "Burak", "Selin", "Deniz",
         "Kerem", "Ece", "Mert"),
        ("Yılmaz", "Kaya", "Demir", "Şahin", "Çelik", "Aydın", "Öztürk", "Arslan",
         "Doğan", "Koç"),
    ),
    (
        ("Omar", "Layla", "Karim", "Yasmin", "Tariq", "Nour", "Samir", "Amira",
         "Youssef", "Rania", "Hassan", "Salma"),
        ("Haddad", "Khalil", "Mansour", "Nasser", "Saleh", "Farouk", "Hamdan", "Aziz",
         "Rahman", "Khoury", "Bakri"),
    ),
    (
        ("Darius", "Shirin", "Reza", "Parisa", "Arash", "Neda", "Kian", "Leila",
         "Babak", "Mina"),
        ("Tehrani", "Karimi", "Ahmadi", "Hosseini", "Rostami", "Moradi", "Jafari",
         "Sadeghi"),
    ),
    (
        ("Priya", "Arjun", "Ananya", "Rohan", "Kavya", "Vikram", "Meera", "Aditya",
         "Neha", "Rahul", "Isha", "Sanjay"),
        ("Sharma", "Patel", "Iyer", "Reddy", "Gupta", "Nair", "Menon", "Kapoor", "Desai",
         "Rao", "Joshi", "Banerjee"),
    ),
    (
        ("Wei", "Mei", "Jun", "Lin", "Hao", "Xin", "Jing", "Tao", "Ying", "Lei", "Yan",
         "Bo"),
        ("Wang", "Li", "Zhang", "Liu", "Chen", "Yang", "Huang", "Zhao", "Wu", "Zhou",
         "Xu", "Sun"),
    ),
    (
        ("Yuki", "Haruto", "Aoi", "Ren", "Sakura", "Sota", "Hina", "Kenji", "Mio",
         "Daiki", "Emi", "Takumi"),
        ("Tanaka", "Suzuki", "Takahashi", "Watanabe", "Ito", "Yamamoto", "Nakamura",
         "Kobayashi", "Sato", "Kato", "Ueda"),
    ),
    (
        ("Minjun", "Seoyeon", "Jiho", "Jiwoo", "Hyun", "Soyeon", "Joon", "Eunji",
         "Taeyang", "Yuna"),
        ("Kim", "Lee", "Park", "Choi", "Jung", "Kang", "Cho", "Yoon", "Jang", "Lim"),
    ),
    (
        ("Linh", "Minh", "Anh", "Duc", "Thu", "Nam", "Mai", "Quang", "Paolo", "Bea",
         "Miguel", "Joy"),
        ("Nguyen", "Tran", "Pham", "Hoang", "Vu", "Dang", "Santos", "Reyes", "Cruz",
         "Bautista", "Mendoza"),
    ),
    (
        ("Chidi", "Ngozi", "Emeka", "Adaeze", "Tunde", "Folake", "Kwame", "Ama", "Kofi",
         "Abena", "Yaw", "Efua"),
        ("Okafor", "Adeyemi", "Okonkwo", "Eze", "Balogun", "Mensah", "Asante",
         "Boateng", "Owusu", "Adebayo", "Nwosu"),
    ),
    (
        ("Amani", "Wanjiru", "Baraka", "Zawadi", "Juma", "Neema", "Abebe", "Selam",
         "Dawit", "Hiwot"),
        ("Kamau", "Otieno", "Mwangi", "Njoroge", "Wanjala", "Tesfaye", "Bekele", "Haile",
         "Girma", "Mutua"),
    ),
    (
        ("Erik", "Ingrid", "Lars", "Astrid", "Magnus", "Freya", "Nils", "Sigrid",
         "Oskar", "Elin", "Henrik", "Maja"),
        ("Andersen", "Hansen", "Johansson", "Lindqvist", "Nilsen", "Berg", "Dahl",
         "Holm", "Lund", "Strand", "Larsen"),
    ),
    (
        ("Daan", "Sanne", "Thijs", "Femke", "Bram", "Lotte", "Jeroen", "Anouk", "Ruben",
         "Eva"),
        ("de Vries", "Jansen", "Bakker", "Visser", "Smit", "Meijer", "de Boer", "Mulder",
         "Peeters", "Claes"),
    ),
    (
        ("Nikos", "Eleni", "Giorgos", "Katerina", "Yannis", "Sofia", "Dimitris", "Maria",
         "Kostas", "Despina"),
        ("Papadopoulos", "Georgiou", "Nikolaidis", "Konstantinou", "Vlachos", "Alexiou",
         "Pappas", "Christodoulou"),
    ),
    (
        ("Noa", "Itai", "Tamar", "Yoni", "Maya", "Omer", "Shira", "Eitan", "Yael", "Ari"),
        ("Cohen", "Levi", "Mizrahi", "Peretz", "Biton", "Friedman", "Avraham", "Katz"),
    ),
    (
        ("Santiago", "Valeria", "Sebastián", "Ximena", "Emilio", "Renata", "Joaquín",
         "Paula", "Tomás", "Florencia"),
        ("Hernández", "González", "Ramírez", "Flores", "Rojas", "Medina", "Herrera",
         "Aguilar", "Castro", "Vargas"),
    ),
)  # fmt: skip

#: Short forms a person may rename themselves to (given name -> nickname).
NICKNAMES: dict[str, str] = {
    "Katarzyna": "Kasia", "Maximilian": "Max", "Alessia": "Ale", "Francesca": "Fra",
    "Alexandra": "Sasha", "Dmitri": "Dima", "Natalia": "Natasha", "Mykola": "Kolya",
    "Johanna": "Jo", "Valentina": "Vale", "Sebastián": "Seba", "Santiago": "Santi",
    "Florencia": "Flor", "Nicolas": "Nico", "Gabriel": "Gabi", "Mariana": "Mari",
    "Carolina": "Carol", "Beatriz": "Bia", "Rodrigo": "Digo", "Matteo": "Teo",
    "Lorenzo": "Enzo", "Federica": "Fede", "Stefano": "Ste", "Agnieszka": "Aga",
    "Tomasz": "Tomek", "Michał": "Michu", "Ananya": "Anu", "Aditya": "Adi",
    "Vikram": "Vik", "Katerina": "Kat", "Dimitris": "Jim", "Giorgos": "George",
    "Konstantinos": "Kostas", "Christopher": "Chris", "Charlotte": "Lottie",
    "Thomas": "Tom", "Daniel": "Dan", "Hannah": "Han", "Elizabeth": "Liz",
    "Isabel": "Isa", "Javier": "Javi", "Lucía": "Lu", "Ingrid": "Inge", "Magnus": "Mags",
    "Jeroen": "Jer", "Takumi": "Taku", "Haruto": "Haru", "Seoyeon": "Seo",
    "Oksana": "Ksyusha", "Wanjiru": "Wanji", "Zawadi": "Zawi", "Adaeze": "Ada",
    "Folake": "Fola", "Babak": "Bobby", "Youssef": "Joe", "Amira": "Mira",
}  # fmt: skip

#: What a bot does; its chat follows the bot script of the same name.
BOT_KINDS: tuple[str, ...] = (
    "Weather", "Translate", "Reminder", "Poll", "News", "Music", "Quiz", "Stickers",
    "Recipe", "Currency", "Parcel", "Fitness", "Calendar", "Notes", "Dictionary",
    "Trivia", "Timer", "Converter",
)  # fmt: skip
BOT_PATTERNS = (
    "{} Bot", "{} Helper", "Daily {} Bot", "{} Assistant", "Smart {} Bot", "{} Buddy",
    "Quick {} Bot", "{} Pro Bot",
)  # fmt: skip

#: (theme, talk topic) of group names: "Climbing" + "Crew".
GROUP_THEMES: tuple[tuple[str, str], ...] = (
    ("Book", "books"), ("Climbing", "sport"), ("Board Game", "plans"),
    ("Running", "sport"), ("Cycling", "sport"), ("Hiking", "travel"),
    ("Football", "sport"), ("Chess", "plans"), ("Family", "family"),
    ("Cousins", "family"), ("Office", "work"), ("Dev", "work"),
    ("Design", "work"), ("Project", "work"), ("Neighbourhood", "home"),
    ("Garden", "home"), ("Flatmates", "home"), ("Cooking", "food"),
    ("Sourdough", "food"), ("Brunch", "food"), ("Coffee", "coffee"),
    ("Film", "film"), ("Movie Night", "film"), ("Jazz", "music"), ("Choir", "music"),
    ("Band", "music"), ("Travel", "travel"), ("Road Trip", "travel"),
    ("Ski Trip", "travel"), ("Study", "study"), ("Exam Prep", "study"),
    ("Uni", "study"), ("School Parents", "family"), ("Yoga", "sport"),
    ("Gym", "sport"), ("Tennis", "sport"), ("Volleyball", "sport"),
    ("Photography", "plans"), ("Dog Walkers", "pets"), ("Cat People", "pets"),
    ("Gaming", "plans"), ("Language Exchange", "smalltalk"),
    ("Birthday", "plans"), ("Wedding", "plans"), ("Weekend", "plans"),
    ("Friday Drinks", "plans"), ("Lunch", "food"), ("Pub Quiz", "plans"),
    ("Surf", "sport"), ("Swimming", "sport"), ("Knitting", "home"),
    ("Stargazing", "weather"), ("Allotment", "home"), ("Wine", "food"),
    ("Ramen", "food"), ("Karaoke", "music"), ("Vinyl", "music"),
    ("Marathon", "sport"), ("Camping", "travel"), ("Alumni", "smalltalk"),
    ("Housemates", "home"), ("Team Lunch", "food"), ("Carpool", "plans"),
)  # fmt: skip
GROUP_NOUNS = (
    "Chat", "Crew", "Squad", "Gang", "Group", "Club", "Circle", "Team", "Friends",
    "Folks", "Buddies", "Collective", "Society", "Bunch", "Lot",
)  # fmt: skip

#: (topic, beat) of channel names: "Football" + "{} Daily"; the beat is what it posts.
CHANNEL_TOPICS: tuple[tuple[str, str], ...] = (
    ("Tech", "tech"), ("Gadgets", "tech"), ("AI", "tech"), ("Startups", "tech"),
    ("Science", "science"), ("Space", "science"), ("Astronomy", "science"),
    ("Football", "sport"), ("Tennis", "sport"), ("Cycling", "sport"),
    ("Running", "sport"), ("Basketball", "sport"), ("Cinema", "culture"),
    ("Series", "culture"), ("Music", "culture"), ("Jazz", "culture"),
    ("Books", "culture"), ("Economy", "economy"), ("Markets", "economy"),
    ("Climate", "climate"), ("Weather", "climate"), ("Travel", "travel"),
    ("Food", "food"), ("Recipes", "food"), ("Coffee", "food"), ("Wine", "food"),
    ("History", "history"), ("Design", "design"), ("Photo", "design"),
    ("Architecture", "design"), ("Gaming", "tech"), ("Python", "dev"),
    ("Linux", "dev"), ("Web Dev", "dev"), ("Open Source", "dev"),
    ("Health", "health"), ("Fitness", "health"), ("City", "city"),
    ("Urbanism", "city"), ("Transit", "city"),
)  # fmt: skip
CHANNEL_PATTERNS = (
    "{} Daily", "The {} Digest", "{} News", "{} Weekly", "All About {}", "{} Today",
    "{} Insider", "{} Notes", "{} Radar", "{} Explained", "{} Bulletin", "Inside {}",
)  # fmt: skip
#: Language editions, the last resort for telling channels apart.
EDITIONS = ("EN", "ES", "PT", "FR", "DE", "IT", "PL", "TR", "NL", "SV")

CITIES = (
    "Lisbon", "Porto", "Madrid", "Valencia", "Barcelona", "Seville", "Lyon", "Marseille",
    "Paris", "Brussels", "Ghent", "Amsterdam", "Utrecht", "Rotterdam", "Hamburg", "Berlin",
    "Munich", "Leipzig", "Cologne", "Vienna", "Zurich", "Geneva", "Milan", "Turin",
    "Bologna", "Naples", "Rome", "Athens", "Istanbul", "Izmir", "Warsaw", "Krakow",
    "Prague", "Budapest", "Copenhagen", "Oslo", "Bergen", "Stockholm", "Helsinki",
    "Tallinn", "Riga", "Vilnius", "Kyiv", "Lviv", "Tbilisi", "Cairo", "Casablanca",
    "Lagos", "Accra", "Nairobi", "Addis Ababa", "Kigali", "Cape Town", "Dubai", "Beirut",
    "Mumbai", "Bangalore", "Delhi", "Colombo", "Bangkok", "Hanoi", "Manila", "Singapore",
    "Jakarta", "Seoul", "Busan", "Tokyo", "Osaka", "Kyoto", "Taipei", "Sydney",
    "Melbourne", "Auckland", "Vancouver", "Toronto", "Montreal", "Chicago", "Boston",
    "Denver", "Seattle", "Mexico City", "Bogota", "Lima", "Santiago", "Buenos Aires",
    "Sao Paulo", "Edinburgh", "Dublin", "Glasgow", "Manchester",
)  # fmt: skip
