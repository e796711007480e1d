# Writes the CSV files of examples/real/spec.yaml from datasets that ship with R
# and its recommended/installed packages (datasets, MASS, survival, AER, plm, lme4,
# lmerTest). Run from examples/real/:  Rscript build_data.R
# Every file: UTF-8, comma-separated, header row, LF line endings, no row names,
# missing cells blank. Derived columns (logs, averages, recodes) are documented in
# spec.yaml's data dictionaries.
suppressPackageStartupMessages({
  library(MASS); library(survival); library(AER); library(plm)
})
dir.create("data", showWarnings = FALSE)
out <- function(d, name) {
  rownames(d) <- NULL
  stopifnot(!anyDuplicated(names(d)))
  cells <- lapply(d, function(x) {
    v <- if (is.numeric(x)) as.character(x) else enc2utf8(as.character(x))   # numbers: 15 significant digits
    q <- !is.na(v) & grepl('[",\r\n]', v)
    v[q] <- paste0('"', gsub('"', '""', v[q]), '"')   # quote only where CSV needs it
    v[is.na(v)] <- ""
    v
  })
  lines <- c(paste(names(d), collapse = ","), do.call(paste, c(cells, sep = ",")))
  con <- file(file.path("data", name), open = "wb")   # binary: LF line endings
  writeLines(enc2utf8(lines), con, sep = "\n", useBytes = TRUE)
  close(con)
}
lab <- function(x, from, to) factor(to[match(as.character(x), as.character(from))], levels = to)

# datasets::morley -- Michelson's 1879 speed-of-light measurements
out(data.frame(expt = morley$Expt, run = morley$Run, speed = morley$Speed), "morley.csv")

# MASS::survey -- 237 Adelaide statistics students
s <- survey
out(data.frame(sex = s$Sex, wr_hnd = s$Wr.Hnd, nw_hnd = s$NW.Hnd, w_hnd = s$W.Hnd, fold = s$Fold,
               pulse = s$Pulse, clap = s$Clap, exer = s$Exer, smoke = s$Smoke, height = s$Height,
               age = s$Age), "survey.csv")

# plm::Crime -- North Carolina counties; log crime rate in 1981 and 1987
data("Crime", package = "plm")
cr <- Crime[Crime$year %in% c(81, 87), c("county", "year", "region", "smsa", "crmrte", "lcrmrte")]
cr$lcrmrte <- signif(cr$lcrmrte, 7)   # stored in single precision: back to the published digits
c81 <- cr[cr$year == 81, ]; c87 <- cr[cr$year == 87, ]
stopifnot(identical(c81$county, c87$county), identical(c81$region, c87$region))
out(data.frame(county = c81$county, region = c81$region, smsa = c81$smsa,
               crmrte_1981 = c81$crmrte, crmrte_1987 = c87$crmrte,
               lcrmrte_1981 = c81$lcrmrte, lcrmrte_1987 = c87$lcrmrte), "crime_nc.csv")

# lme4::VerbAgg -- situation 2 ("I miss a train because a clerk gave me faulty information"), cursing
data("VerbAgg", package = "lme4")
v <- VerbAgg
w <- v[v$item == "S2WantCurse", c("id", "Gender", "Anger", "r2")]
d <- v[v$item == "S2DoCurse", c("id", "r2")]
m <- merge(w, d, by = "id", suffixes = c("_want", "_do"))
m <- m[order(as.integer(as.character(m$id))), ]
out(data.frame(id = m$id, gender = lab(m$Gender, c("F", "M"), c("female", "male")), anger = m$Anger,
               want_curse = lab(m$r2_want, c("N", "Y"), c("no", "yes")),
               do_curse = lab(m$r2_do, c("N", "Y"), c("no", "yes"))), "verbagg_train_curse.csv")

# MASS::birthwt -- Baystate Medical Center births, 1986
b <- birthwt
out(data.frame(low = lab(b$low, 0:1, c("normal", "low")), age = b$age, lwt = b$lwt,
               race = lab(b$race, 1:3, c("white", "black", "other")),
               smoke = lab(b$smoke, 0:1, c("non-smoker", "smoker")), ptl = b$ptl,
               ht = lab(b$ht, 0:1, c("no", "yes")), ui = lab(b$ui, 0:1, c("no", "yes")),
               ftv = b$ftv, bwt = b$bwt), "birthwt.csv")

# datasets::airquality -- New York, May and August 1973
a <- airquality[airquality$Month %in% c(5, 8), ]
out(data.frame(month = lab(a$Month, c(5, 8), c("May", "August")), day = a$Day, ozone = a$Ozone,
               solar_r = a$Solar.R, wind = a$Wind, temp = a$Temp), "airquality_may_august.csv")

# survival::pbcseq -- Mayo PBC trial, serum bilirubin at entry and at the visit nearest 1 year
p0 <- pbcseq[pbcseq$day == 0, ]
p1 <- do.call(rbind, lapply(split(pbcseq[pbcseq$day > 0, ], pbcseq$id[pbcseq$day > 0]), function(x) {
  x[which.min(abs(x$day - 365)), ]
}))
p1 <- p1[abs(p1$day - 365) <= 60, c("id", "day", "bili")]
m <- merge(p0[, c("id", "trt", "sex", "age", "bili")], p1, by = "id", suffixes = c("_0", "_1"))
m <- m[order(m$id), ]   # pbcseq codes trt 1 = D-penicillamine, 0 = placebo (pbc: 1 and 2)
out(data.frame(id = m$id, trt = lab(m$trt, c(1, 0), c("D-penicillamine", "placebo")), sex = lab(m$sex, c("m", "f"), c("male", "female")),
               age = round(m$age, 2), bili_entry = m$bili_0, bili_year1 = m$bili_1, day_year1 = m$day),
    "pbcseq_bilirubin.csv")

# datasets::chickwts, iris, InsectSprays
out(data.frame(weight = chickwts$weight, feed = chickwts$feed), "chickwts.csv")
out(data.frame(sepal_length = iris$Sepal.Length, sepal_width = iris$Sepal.Width, petal_length = iris$Petal.Length,
               petal_width = iris$Petal.Width, species = iris$Species), "iris.csv")
out(data.frame(count = InsectSprays$count, spray = InsectSprays$spray), "insectsprays.csv")

# lme4::Penicillin
data("Penicillin", package = "lme4")
out(data.frame(plate = Penicillin$plate, sample = Penicillin$sample, diameter = Penicillin$diameter), "penicillin.csv")

# datasets::HairEyeColor, expanded to one row per student
h <- as.data.frame(HairEyeColor)
h <- h[rep(seq_len(nrow(h)), h$Freq), c("Hair", "Eye", "Sex")]
out(data.frame(hair = h$Hair, eye = h$Eye, sex = h$Sex), "haireyecolor.csv")

# survival::colon -- one row per patient (the death record, etype 2)
cl <- colon[colon$etype == 2, ]
cl <- cl[order(cl$id), ]
out(data.frame(id = cl$id, rx = cl$rx, sex = lab(cl$sex, 0:1, c("female", "male")), age = cl$age,
               obstruct = lab(cl$obstruct, 0:1, c("no", "yes")), perfor = lab(cl$perfor, 0:1, c("no", "yes")),
               adhere = lab(cl$adhere, 0:1, c("no", "yes")), nodes = cl$nodes,
               differ = lab(cl$differ, 1:3, c("well", "moderate", "poor")),
               extent = lab(cl$extent, 1:4, c("submucosa", "muscle", "serosa", "contiguous structures")),
               surg = lab(cl$surg, 0:1, c("short", "long")), time = cl$time, death = cl$status), "colon_patients.csv")

# AER::ResumeNames
data("ResumeNames")
r <- ResumeNames
out(data.frame(name = r$name, gender = r$gender, ethnicity = lab(r$ethnicity, c("cauc", "afam"), c("white", "african-american")),
               quality = r$quality, call = r$call, city = r$city, jobs = r$jobs, experience = r$experience,
               honors = r$honors, volunteer = r$volunteer, military = r$military, holes = r$holes,
               school = r$school, email = r$email, computer = r$computer, special = r$special,
               college = r$college, wanted = r$wanted, industry = r$industry), "resumenames.csv")

# MASS::cats, MASS::mammals
out(data.frame(sex = cats$Sex, bwt = cats$Bwt, hwt = cats$Hwt), "cats.csv")
out(data.frame(species = rownames(mammals), body = mammals$body, brain = mammals$brain), "mammals.csv")

# AER::Affairs
data("Affairs")
af <- Affairs
out(data.frame(affairs = af$affairs, gender = af$gender, age = af$age, yearsmarried = af$yearsmarried,
               children = af$children, religiousness = af$religiousness, education = af$education,
               occupation = af$occupation, rating = af$rating), "affairs.csv")

# datasets::swiss
out(data.frame(province = rownames(swiss), fertility = swiss$Fertility, agriculture = swiss$Agriculture,
               examination = swiss$Examination, education = swiss$Education, catholic = swiss$Catholic,
               infant_mortality = swiss$Infant.Mortality), "swiss.csv")

# AER::CASchools, with Stock & Watson's student-teacher ratio and average test score
data("CASchools")
ca <- CASchools
num <- vapply(ca, is.double, TRUE)
ca[num] <- lapply(ca[num], signif, 7)   # stored in single precision: back to the published digits
out(data.frame(district = ca$district, school = ca$school, county = ca$county, grades = ca$grades,
               students = ca$students, teachers = ca$teachers, calworks = ca$calworks, lunch = ca$lunch,
               computer = ca$computer, expenditure = ca$expenditure, income = ca$income, english = ca$english,
               read = ca$read, math = ca$math, str = ca$students / ca$teachers, score = (ca$read + ca$math) / 2),
    "caschools.csv")

# AER::CPS1985
data("CPS1985")
cp <- CPS1985
out(data.frame(wage = cp$wage, log_wage = log(cp$wage), education = cp$education, experience = cp$experience,
               age = cp$age, ethnicity = cp$ethnicity, region = cp$region, gender = cp$gender,
               occupation = cp$occupation, sector = cp$sector, union = cp$union, married = cp$married), "cps1985.csv")

# AER::PSID7682 -- long panel, 595 workers x 7 years
data("PSID7682")
ps <- PSID7682
out(data.frame(id = ps$id, year = ps$year, wage = ps$wage, log_wage = log(ps$wage), experience = ps$experience,
               weeks = ps$weeks, occupation = ps$occupation, industry = ps$industry, south = ps$south,
               smsa = ps$smsa, married = ps$married, gender = ps$gender, union = ps$union,
               education = ps$education, ethnicity = ps$ethnicity), "psid7682.csv")

# MASS::nlschools
nl <- nlschools
out(data.frame(class = nl$class, lang = nl$lang, iq = nl$IQ, ses = nl$SES, gs = nl$GS,
               comb = lab(nl$COMB, 0:1, c("single-grade", "multi-grade"))), "nlschools.csv")

# lmerTest::carrots
data("carrots", package = "lmerTest")
ct <- carrots
out(data.frame(consumer = ct$Consumer, product = ct$Product, preference = ct$Preference, sweetness = ct$Sweetness,
               bitter = ct$Bitter, crisp = ct$Crisp,
               gender = lab(ct$Gender, 1:2, c("male", "female")),
               age_group = lab(ct$Age, 1:4, c("under 25", "26-40", "41-60", "over 61")),
               frequency = lab(ct$Frequency, 1:5, c("weekly or more", "every two weeks", "every three weeks",
                                                    "at least monthly", "less than monthly"))), "carrots.csv")

# AER::SwissLabor
data("SwissLabor")
sl <- SwissLabor
out(data.frame(participation = sl$participation, income = sl$income, age = sl$age, education = sl$education,
               youngkids = sl$youngkids, oldkids = sl$oldkids, foreign = sl$foreign), "swisslabor.csv")

# MASS::Insurance
ins <- Insurance
out(data.frame(district = paste("district", ins$District), car_group = as.character(ins$Group), engine_class = as.integer(ins$Group),
               age_group = as.character(ins$Age), holders = ins$Holders, claims = ins$Claims), "insurance.csv")

# survival::bladder1 -- one row per patient: recurrences and follow-up
bl <- do.call(rbind, lapply(split(bladder1, bladder1$id), function(x) data.frame(
  id = x$id[1], treatment = x$treatment[1], initial_number = x$number[1], initial_size = x$size[1],
  recurrences = x$recur[1], followup = max(x$stop))))
bl <- bl[bl$followup > 0, ]   # patients with no follow-up at all (stop = 0) have no time at risk
out(bl[order(bl$id), ], "bladder_recurrences.csv")

# survival::pbc -- the 312 randomised patients
pb <- pbc[!is.na(pbc$trt), ]
out(data.frame(id = pb$id, time = pb$time, status = lab(pb$status, 0:2, c("censored", "transplant", "dead")),
               death = as.integer(pb$status == 2), trt = lab(pb$trt, 1:2, c("D-penicillamine", "placebo")),
               age = round(pb$age, 2), sex = lab(pb$sex, c("m", "f"), c("male", "female")), bili = pb$bili,
               albumin = pb$albumin, protime = pb$protime, stage = pb$stage), "pbc_trial.csv")

# survival::rotterdam
ro <- rotterdam
out(data.frame(pid = ro$pid, year = ro$year, age = ro$age, meno = lab(ro$meno, 0:1, c("pre", "post")),
               size = ro$size, grade = ro$grade, nodes = ro$nodes, pgr = ro$pgr, er = ro$er,
               hormon = lab(ro$hormon, 0:1, c("none", "hormonal")), chemo = lab(ro$chemo, 0:1, c("no", "yes")),
               dtime = ro$dtime, death = ro$death), "rotterdam.csv")

# AER::PSID1976 (Mroz)
data("PSID1976")
mz <- PSID1976
out(data.frame(participation = mz$participation, hours = mz$hours, wage = mz$wage,
               log_wage = ifelse(mz$wage > 0, log(mz$wage), NA), education = mz$education,
               experience = mz$experience, age = mz$age, youngkids = mz$youngkids, oldkids = mz$oldkids,
               feducation = mz$feducation, meducation = mz$meducation, city = mz$city), "psid1976.csv")

# plm::Grunfeld
data("Grunfeld", package = "plm")
out(data.frame(firm = Grunfeld$firm, year = Grunfeld$year, inv = Grunfeld$inv, value = Grunfeld$value,
               capital = Grunfeld$capital), "grunfeld.csv")

# AER::USSeatBelts -- 1983-1990; states that raised the rural interstate limit to 65 mph in 1987
# (treated) and states with no 65 mph limit in 1983-1990 (comparison); GA and VA (1988) left out
data("USSeatBelts")
sb <- USSeatBelts
sb$yr <- as.integer(as.character(sb$year))
first65 <- sapply(split(sb, sb$state), function(d) { y <- d$yr[d$speed65 == "yes"]; if (length(y)) min(y) else Inf })
keep <- names(first65)[first65 == 1987 | first65 > 1990]
sb <- sb[sb$yr <= 1990 & as.character(sb$state) %in% keep, ]
sb <- sb[order(sb$state, sb$yr), ]
sb$fatalities <- signif(sb$fatalities, 7); sb$age <- signif(sb$age, 7)   # single-precision artefacts
out(data.frame(state = as.character(sb$state), year = sb$yr,
               treated = as.integer(first65[as.character(sb$state)] == 1987), post = as.integer(sb$yr >= 1987),
               speed65 = sb$speed65, fatalities = sb$fatalities, miles = sb$miles, income = sb$income,
               age = sb$age, drinkage = sb$drinkage, alcohol = sb$alcohol, enforce = sb$enforce), "seatbelts_speed65.csv")

# MASS::Pima.tr + Pima.te (532 women with complete records)
pm <- rbind(Pima.tr, Pima.te)
out(data.frame(npreg = pm$npreg, glu = pm$glu, bp = pm$bp, skin = pm$skin, bmi = pm$bmi, ped = pm$ped, age = pm$age,
               type = lab(pm$type, c("No", "Yes"), c("non-diabetic", "diabetic"))), "pima.csv")

# MASS::Cars93
cs <- Cars93
out(data.frame(make = cs$Make, type = cs$Type, origin = cs$Origin, price = cs$Price, mpg_city = cs$MPG.city,
               mpg_highway = cs$MPG.highway, engine_size = cs$EngineSize, horsepower = cs$Horsepower,
               rpm = cs$RPM, rev_per_mile = cs$Rev.per.mile, fuel_tank = cs$Fuel.tank.capacity,
               passengers = cs$Passengers, length = cs$Length, wheelbase = cs$Wheelbase, width = cs$Width,
               turn_circle = cs$Turn.circle, weight = cs$Weight), "cars93.csv")

# datasets::BJsales -- Box and Jenkins' sales series and its leading indicator, 150 consecutive periods
out(data.frame(period = seq_along(BJsales), sales = as.numeric(BJsales), lead = as.numeric(BJsales.lead)),
    "bjsales.csv")

# datasets::EuStockMarkets -- daily closing prices of four European stock indices, 1991-1998 (business days)
eu <- EuStockMarkets
out(data.frame(day = seq_len(nrow(eu)), dax = as.numeric(eu[, "DAX"]), smi = as.numeric(eu[, "SMI"]),
               cac = as.numeric(eu[, "CAC"]), ftse = as.numeric(eu[, "FTSE"])), "eustockmarkets.csv")

# datasets::CO2 -- CO2 uptake of 12 Echinochloa crus-galli plants, each at 7 ambient concentrations
out(data.frame(plant = as.character(CO2$Plant), type = CO2$Type, treatment = CO2$Treatment, conc = CO2$conc,
               uptake = CO2$uptake), "co2_plants.csv")

# datasets::ChickWeight -- the 45 chicks weighed at all 12 times, days 0 to 21
cw <- ChickWeight[ChickWeight$Chick %in% names(which(table(ChickWeight$Chick) == 12)), ]
cw <- cw[order(as.integer(as.character(cw$Chick)), cw$Time), ]
out(data.frame(chick = as.integer(as.character(cw$Chick)), diet = as.integer(as.character(cw$Diet)), day = cw$Time,
               weight = cw$weight), "chickweight_complete.csv")

# MASS::bacteria -- H. influenzae checks of 50 children, each given the drug or the placebo
ba <- bacteria[order(as.character(bacteria$ID), bacteria$week), ]
out(data.frame(child = as.character(ba$ID), treatment = ifelse(ba$ap == "a", "drug", "placebo"),
               compliance_encouraged = ifelse(ba$hilo == "hi", "yes", "no"), week = ba$week,
               h_influenzae = ifelse(ba$y == "y", "present", "absent")), "bacteria_children.csv")

# survival::kidney -- 38 patients on dialysis, two catheter insertions each, followed to infection
kd <- kidney[order(kidney$id), ]
out(data.frame(patient = kd$id, sex = ifelse(kd$sex == 1, "male", "female"), age = kd$age,
               disease = as.character(kd$disease), days = kd$time, infection = kd$status), "kidney_catheter.csv")
