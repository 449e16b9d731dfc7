"""Conversation scripts of private chats and groups, one block of text per topic.

Each line is one turn: its indent (two spaces a level) is its depth, the other side
speaks each next level, and a line's children are the turns that can follow it. The
mark before the text says what the turn does:

* ``?`` asks something; every child of a question is an answer (``=``);
* ``=`` answers its parent (it may ask back: its children then answer it);
* ``.`` says something (news, a plan, a feeling);
* ``~`` reacts or closes.

A ``*`` after the mark of an opener (``.*``) keeps it for conversations of more than
one message: alone, it would read like half of one.

Alternatives of one turn are separated by `` | `` (a line ending in ``|`` goes on in
the next); a mark followed by ``^`` (``=^``)
takes the alternative of the same place as its parent's, for answers that fit one
question only. ``{slot}`` names come from
``dataset.talk_lines.SLOTS`` and keep one value through a conversation. A topic's
top-level lines are the ways a conversation on it can start.
"""

from __future__ import annotations

__all__ = ["BOT_SCRIPTS", "SCRIPTS"]

SCRIPTS: dict[str, str] = {
    "plans": """
? Are you free {day}? | Got any plans {day}? | What are you up to {day}?
  = Nothing yet, why? | Not really, what's up? | Nothing planned, why?
    ? Fancy {activity}? | Want to join me for {activity}? | How about {activity}?
      = Sounds great! What time? | I'm in! When? | Yes! When and where?
        = Around {time}? | Let's say {time} at {place} | {time} at {place}?
          ~ Perfect, see you then | Works for me 👍 | Deal!
      = Hmm, not really my thing. Dinner instead? | Maybe something quieter? Dinner?
        = Sure, dinner works | Fine by me, {restaurant}?
          ~ Great, I'll book a table | Perfect 😋
  = Busy, sorry 😕 | I'm away {day}, sorry | Working, unfortunately
    ? Next week then? | Another time? Maybe next week?
      = Yes, let's do that | Definitely, tell me which day works
        ~ Will do! | 👍
? Are we still on {day}? | Still on {day}? | We're still meeting {day}, right?
  = Yes! {time} at {place} | Of course, is {time} still good? | Yep, see you at {place}
    ~ Great, see you there | Perfect 👍 | Can't wait!
  = Oh no, I totally forgot, can we move it? | Can we push it a bit? Something came up
    = Sure, how about {time} instead? | No problem, let's do next week
      = Perfect, thank you! | That works, sorry again
        ~ No worries! | All good 🙂
.* Running {minutes} minutes late, sorry! | Be there in {minutes} minutes |
    On my way, {minutes} more minutes
  ~ No worries | Take your time | Ok, I'll grab a table
    ~ Thanks! | 🙏
.* I'm here, by {place} | I'm at {place} already | Here! Where are you?
  = Coming, two minutes | Just parking | I see you!
? What time tomorrow? | When shall we meet tomorrow? | What time works for you?
  = {time}? | Any time after {time} | {time} at {place}?
    ~ Great | Perfect, see you | 👍
""",
    "coffee": """
? Coffee later? | Coffee at {time}? | Quick coffee {day}? | Want to grab a coffee {day}?
  = Yes please, I need one ☕ | Sure! Usual place? | Always up for coffee
    = Usual place, {time} | {place} at {time}? | Yes, the usual, {time}
      ~ See you there ☕ | Perfect | 👍
  = Can't today, tomorrow? | I've had three coffees already 😅 tea instead?
    =^ Tomorrow works | Tea it is 😄
      ~ Great! | Deal
. This coffee is amazing | Best coffee in town at {place} |
    I think I've had too much coffee today 😅
  ~ Haha classic | Jealous! | Bring me one next time
.* Made coffee, want some? | Coffee's ready! | Fresh coffee in the kitchen
  = Yes please! | Coming! | Two minutes
? Do you know a good coffee place near {place}? | Any coffee recommendations around {place}?
  = Try the one on the corner, great coffee | The little café by {place} |
      Honestly the bakery has the best coffee
    ~ Thanks, will try! | Ooh good tip
? Can you bring coffee beans on your way? | Did you buy coffee? We're out
  =^ Sure, the usual ones? | Yes, got two bags
    ~ You're a star | Thanks! | Haha ok
""",
    "food": """
? What's for dinner? | Any dinner plans? | Dinner tonight?
  = Thinking {food} | No idea, {food}? | I'm cooking {dish}
    ~ Ooh yes | Sounds good 😋 | Save me some!
? Fancy {food} tonight? | Shall we get {food}? | Want to try {restaurant}?
  = Yes! I'm starving | Always 😋 | Sure, what time?
    = {time}? | Let's say {time} | I'll book for {time}
      ~ Perfect | See you there
  = Had {food} yesterday, something else? | Not really hungry, sorry
    = {restaurant} then? | Fair, {food} another day
      ~ Sure | Ok 🙂
. I made {dish} today | First try at {dish} 😅 | Made {dish}, turned out great
  ? How did it turn out? | Was it good? | Recipe please!
    = Pretty good actually! | A bit salty but ok 😅 | Amazing, will send you the recipe
      ~^ Nice! | Haha 😄 | Yes please
. {restaurant} is closed today 😭 | The new place near {place} is really good |
    Best {food} I've had in ages
  ~^ Noo | Good to know | Ooh we should go
? Can you pick up bread on the way? | Can you grab some milk? | Do we need anything from the shop?
  = Sure, anything else? | Yes, on my way | Already got it
    = That's all, thanks! | Maybe some fruit | Eggs, if they have them
      ~ Ok 👍 | Will do
""",
    "work": """
? Did you see my email? | Have you seen the email about {meeting}? |
    Did you get my message about {doc}?
  = Yes, will reply in a bit | Not yet, looking now | Just saw it, thanks
    ~ Thanks! | No rush
? Can we move {meeting} to {time}? | Can we push {meeting} to {time}? | Is {time} ok for {meeting}?
  = Sure, {time} works | Fine by me | I have another call then, a bit later?
    ~ Great, thanks | Updated the invite | Ok, moved it
. Running late for {meeting}, start without me | Stuck on a call, five minutes |
    Sorry, {meeting} is running over
  ~ No problem | Ok, we'll wait | 👍
? Could you have a look at {doc} today? | Do you have a minute to review {doc}? |
    Can you send me {doc}?
  = Sure, after lunch | On it | Give me an hour
    ~ Thank you! | Perfect, thanks
  = Today is packed, tomorrow morning? | Can it wait until tomorrow?
    = Sure, tomorrow is fine | Yes, no rush
      ~ Thanks! | 👍
. The deadline moved to next week 🎉 | The release is out! | Finally finished {doc}
  ~ Finally! | Great news | 🎉
? How's the new job? | How's work going? | How was your first week?
  = Busy but good | Still learning a lot | Honestly, exhausting 😅
    ? Are the people nice? | Nice colleagues at least? | Better than the old one?
      =^ Yes, a really nice team | Mostly, yes | Way better
        ~ Glad to hear! | That's what matters
""",
    "travel": """
? When do you fly? | What time is your flight? | When's your train?
  = {day} at {time} | Early, {time} 😴 | {day}, back in a week
    ~ Have a great trip! | Safe travels! | Nice, enjoy!
. Landed! | Just arrived in {city} | Made it to {city} 🎉 | The train is delayed again 🙄
  ~^ Yay! | Welcome! | Enjoy! | Oh no
? How was the trip? | How was {city}? | Back from {city}?
  = Amazing, so relaxing | Great, but too short | Loved it, the food was incredible
    ? Where did you stay? | What did you like most? | Would you go again?
      =^ A small place near the old town | The food, definitely | Already planning the next one
        ~ Sounds perfect | Jealous! | Nice
  = Tiring but good | The flight was delayed, but fine
    ~ Glad you're back | Rest up!
? Thinking about {city} this summer, have you been? | Have you ever been to {city}?
  = No, but I'd love to | Never, is it nice?
    ~ Let's go together some time! | Heard it's beautiful
  = Yes, loved it! Go! | Once, years ago
    ? Any tips? | What should I see? | Is it worth it?
      =^ Walk around the old town, and eat everything | Go early, it gets crowded | Totally worth it
        ~ Thanks! | Noted 😄
? Can you water my plants while I'm away? | Could you feed {pet} while I'm away?
  = Of course! | Sure, when do you leave? | Happy to
    = {day} | Leaving {day}, back in a week
      ~ No problem, enjoy! | Got it 👍
""",
    "film": """
? Have you seen {film}? | Did you watch {film} yet? | Seen {film}?
  = Yes, loved it! | Saw it on Friday, so good
    ~ Right? The ending 🤯 | Same, I want to see it again
  = Not yet, is it good? | No, worth it?
    = Really good, go see it | It's fine, a bit long
      ~ Ok, adding it to the list | Good to know
? Movie tonight? | Want to watch something tonight? | Cinema {day}?
  = Yes! What's on? | Sure, your pick | Only if it's not a horror film 😅
    = {film}? | How about {film}? | {film} at {time}
      ~ Perfect | Deal 🍿 | I'm in
. Just finished {series}, what do I watch now | Started {series}, so good |
    Watched all of {series} this weekend 😅
  ~ Haha classic | Same, so good | No regrets
. {film} is on at the cinema {day} | Tickets for {film} are on sale
  ? Want to go? | Shall we go?
    = Yes! | Sure, book two | Can't {day}, sorry
""",
    "sport": """
? Did you see the match? | Did you watch the game last night? | Did you see {team} yesterday?
  = Yes! What a finish | {score}, can you believe it | Unbelievable second half
    ~ What a game | Best match this season | 🔥
  = Missed it, who won? | No, was working. Who won?
    = {team}, {score} | We lost {score} 😭
      ~ Next time! | Nice! | Ugh
? Running {day}? | Gym later? | Up for a run {day}?
  = Yes, {time}? | Sure, the usual loop? | My legs still hurt from last time 😅
    =^ {time} at {place} | See you at {place} | Easy pace then, promise
      ~ 👍 | Deal | 💪
. Did my first 10k today! | New personal best 💪 | Climbed my first 6a!
  ~ Amazing! | Well done! | 🎉🎉 | Congrats!
? Are you watching the final {day}? | Where are we watching the final?
  =^ Wouldn't miss it | At {place}?
    ~ See you there | I'll bring snacks
""",
    "family": """
? How's your mum doing? | How are your parents? | How's your grandma?
  = Much better, thanks for asking | Good, they say hi! | Still a bit tired but ok
    ~ So glad to hear | Say hi from me! | 🥰
. {friend}'s birthday is {day}, don't forget! | It's Mum's birthday {day} |
    Reminder: dinner at Grandma's {day}
  ? What should we get? | Any gift ideas? | Shall we get something together?
    = Maybe a book? | Flowers and a cake? | Let's ask {friend}
      ~ Good idea | Ok, I'll sort it
? Can you pick up the kids at {time}? | Can you get the kids from school today?
  = Yes, no problem | Sure, at the usual gate? | I'll be a bit late, is that ok?
    ~ Thanks! | You're a star | 🙏
. The kids say hi! | The little one said her first word today! | First day of school today
  ~^ Hi kids! | Aww, so cute! | Aww, good luck to them!
? Are you coming for Sunday lunch? | Lunch at ours on Sunday?
  = Wouldn't miss it | Yes! What can I bring? | Maybe a bit late
    =^ Great! | Just yourselves | No problem
      ~ See you Sunday | 🙂
""",
    "weather": """
? Is it raining there? | How's the weather over there? | Cold there today?
  = Pouring all day | Sunny and {temp} degrees | Freezing, {cold} degrees
    ~^ Stay dry! | Lucky you | Stay warm!
. It's snowing! | What a storm last night | Finally some sun | So hot today, {temp} degrees 🥵
  ~^ Snow! ⛄ | Same here, I couldn't sleep | Finally! | Stay cool
? Do I need an umbrella? | Will it rain {day}?
  = Definitely take one | They said sunny all day | Maybe, better safe
    ~ Thanks! | 👍
""",
    "music": """
? Going to the {band} concert? | Did you get tickets for {band}? | Want to see {band} {day}?
  = Yes! So excited | Of course, got tickets the first day
    ~ Same! See you there | 🎉
  = Sold out 😭 | Didn't get any, sold out in minutes
    = I have a spare ticket! | {friend} might have a spare one
      ~ Really?! Yes please | Oh, I'll ask
  = Maybe, who else is going? | Not sure yet, who's going?
    = {friend} and me | A few of us from work
      ~ Count me in | Let me check and tell you tonight
. Listening to the new {band} album, it's great | This song has been stuck in my head all day |
    Made a playlist for the trip 🎶
  ~^ Nice, listening now | Haha I know the feeling | Send it!
? What are you listening to lately? | Any music recommendations?
  = Lots of {band} | Mostly old jazz | Honestly the same three albums
    ~ Will check it out | Nice
""",
    "books": """
? Are you still reading {book}? | Finished {book} yet? | How's {book}?
  = Almost done, it's great | Gave up halfway 😅 | Just finished, loved it
    ? Can I borrow it? | Would you recommend it? | Worth reading?
      =^ Of course, I'll bring it {day} | Yes, definitely | Maybe, it's slow at first
        ~ Thanks! | Great | Ok, good to know
. Book club is {day} at {place} | Reminder: finish the book before book club 📚
  ~ 😅 halfway there | Ok! | I'll try
? Any book recommendations? | What are you reading?
  = {book}, it's really good | Just started {book} | A thriller, can't put it down
    ~ Adding it to my list | Ooh nice
""",
    "home": """
? Did you pay the rent? | Did the landlord reply? | Did you call the plumber?
  = Yes, this morning | Not yet, will do today | Still waiting
    ~^ Thanks! | Ok, let me know | Ugh, keep me posted
. The heating is broken again | The neighbours have been drilling since 8 😩 |
    Finally fixed the shelf!
  ~^ Oh no | Ugh | Nice!
? Do you have my keys? | Have you seen my keys? | Did you take the spare keys?
  = They're on the kitchen table | Yes, sorry! In my bag | No, check your jacket
    ~ Found them, thanks! | Phew | Ok 🙏
? Can you help me move {day}? | Could you help with the sofa {day}?
  = Sure, what time? | Yes, I'll bring {friend} | Only if there's pizza 😄
    =^ Around {time}? | Great, thanks! | Pizza guaranteed
      ~ See you then | Deal
""",
    "pets": """
. {pet} stole my sandwich 😂 | {pet} has been sleeping on my laptop all day |
    Took {pet} to the vet, all good
  ~^ Haha classic | Send pictures! | Glad it's all good
? How's {pet}? | How's the new puppy? | Is {pet} feeling better?
  = Much better, thanks | Crazy as ever 😄 | Still a bit tired
    ~ Give them a hug from me | Glad to hear
? Can you walk the dog at {time}? | Can you take {pet} out tonight?
  = Sure | Yes, on it | A bit later, ok?
    ~ Thanks! | 🙏
""",
    "study": """
? How did the exam go? | How was the exam? | Done with exams?
  = Better than expected! | Not great 😅 | One more to go
    ~ Well done! | Fingers crossed | You've got this
? Can you send me the notes from today? | Did you take notes in class? |
    Do you have the slides from the lecture?
  = Sure, sending now | Yes, give me a minute | I missed it too 😅
    ~^ Thanks! | You're the best | Haha ok, I'll ask someone
? Library at {time}? | Study session {day} at {place}?
  = Yes, see you there | I'll be a bit late | Can't, sorry, next time
    ~ 👍 | Ok!
""",
    "smalltalk": """
? How are you? | How's it going? | How's your week been?
  = Good, you? | All good! And you? | Tired but ok, you?
    = Good, thanks! | Not bad | Busy week 😅
      ~ 😄 | Same here | Let's catch up soon
? What's up? | What are you up to?
  = Not much, just got home | Working, as usual | Cooking dinner
    ~ Nice | Haha same
. Long time no see! | Miss you guys!
  = I know, too long! | Miss you too!
    ~ We should meet up soon | Let's fix a date
. Guess who I just ran into: {friend}! | Bumped into {friend} at {place} today
  ? No way! How is {friend}? | Oh nice, how are they?
    = Doing great, says hi | Same as ever 😄
      ~ Say hi back! | Haha
? Did you hear from {friend}? | Have you talked to {friend} lately?
  = Yes, doing well | Not in a while | Just got back from {city}, apparently
    ~^ Good to hear | Same, I should call | Oh nice
.* Thanks again for yesterday! | Thanks for last night, it was great
  ~ Anytime! | Thank you! | We should do it again
""",
    "tech": """
? Do you know how to fix a frozen {gadget}? | My {gadget} keeps restarting, any idea?
  = Try turning it off and on again 😄 | Hold the power button for ten seconds |
      Probably needs an update
    = Worked, thanks! | Still stuck 😩 | Haha ok, trying
      ~ 👍 | Take it to the shop then
. I dropped my {gadget} 😭 | My new {gadget} arrived! | The wifi is down again
  ~^ Oh no | Nice! | Ugh
? Can you send me the wifi password? | What's the wifi password again?
  = It's on the fridge | Sending now | Check the back of the router
    ~ Thanks!
""",
    "health": """
? Feeling better? | How are you feeling? | Still sick?
  = Much better, thanks | Still a bit under the weather | Getting there
    ~ Rest up! | Glad to hear | Get well soon
. Staying home today, feeling awful | Doctor's appointment at {time} |
    Can't come today, I have a fever
  ~ Oh no, get well soon! | Take care | Feel better!
""",
    "group": """
? Who's in for {activity} {day}? | Anyone up for {activity} {day}? | {activity} {day}, who's coming?
  = Me! | I'm in | Count me in | Yes! | Maybe, depends on work
    . Great, {time} at {place} then | I'll book a table for {time} | Meeting at {place} at {time}
      ~ 👍 | Perfect | See you all there
  = Can't this time 😕 | Out of town, sorry
    ~ Next time! | No worries
. Reminder: {activity} {day} at {time}! | Don't forget, we meet {day} at {place} |
    Photos from yesterday coming soon
  ~ 👍 | Thanks! | Can't wait | 🙌
? Did anyone find a black jacket at {place}? | Who has the speaker? | Has anyone seen my umbrella?
  = Not me | I think {friend} took it | Yes! I have it
    ~ Thanks | Phew
? Shall we do a gift for {friend}? | Anyone want to chip in for {friend}'s present?
  = Yes, count me in | Sure, how much? | Good idea!
    = Ten each? | I'll collect it {day} | Let's say twenty each
      ~ 👍 | Done | Sent!
""",
}

#: Bot chats: the account sends a command, the bot answers. ``generic`` serves bots
#: without a script of their own.
BOT_SCRIPTS: dict[str, str] = {
    "generic": """
? /start
  = Hi! I'm {bot}. Send /help to see what I can do.
    ? /help
      = Commands: /start, /help, /settings. Send one to begin.
? /today | /latest
  = Here is today's summary: three new items. Send /more for the details.
    ? /more
      = That's everything for today. I'll send the next summary tomorrow at 8:00.
? /settings
  = Settings: notifications on, language English. Send /language to change it.
    ? /language
      = Choose a language: English, Español, Deutsch, Français.
""",
    "weather": """
? /weather {city} | /now {city}
  = {city} now: {forecast}. Tomorrow: {forecast_later}.
    ? /forecast {city}
      = {city}: today {forecast}, tomorrow {forecast_later}, then much the same.
? /subscribe {city}
  = Done! Every morning at 7:00 you'll get the forecast for {city}.
""",
    "translate": """
? /translate good morning | /translate thank you very much | /translate where is the station?
  =^ Spanish: buenos días. French: bonjour. German: guten Morgen. |
      Spanish: muchas gracias. French: merci beaucoup. | Spanish: ¿dónde está la estación?
""",
    "reminder": """
? /remind {day} at {time} call {friend} | /remind {day} pick up the keys
  = Got it! I'll remind you {day}. | Done, reminder set.
    ? /list
      = Your reminders: {day} at {time}. Send /cancel to remove one.
""",
    "currency": """
? /convert 100 EUR USD | /convert 50 GBP EUR | /rate USD JPY
  =^ 100 EUR = 108.20 USD | 50 GBP = 58.40 EUR | 1 USD = 156.90 JPY
""",
    "parcel": """
? /track NX8841203 | /track 00340434161094042557
  =^ Your parcel is out for delivery, expected between 10:00 and 14:00. |
      In transit: left the sorting centre in {city}.
""",
    "quiz": """
? /quiz | /play
  =^ Question 1: which planet is closest to the sun? | Question 1: how many legs does a spider have?
    =^ Mercury | Eight
      = Correct! 🎉 Send /next for another one.
""",
    "notes": """
? /note buy coffee filters | /note call the landlord | /note book tickets for {film}
  = Saved. You have three notes. Send /notes to see them.
""",
    "recipe": """
? /recipe {dish} | /random
  = {dish}: 20 minutes, serves two. Send /steps for the method.
    ? /steps
      = 1. Prepare everything. 2. Cook gently for 15 minutes. 3. Season and serve.
""",
    "fitness": """
? /log run 5 km | /log gym 45 min | /stats
  =^ Logged! Your third run this week 💪 | Logged! That's four gym days this week |
      This week: 3 workouts, 14 km, 2 h 10 min.
""",
}
